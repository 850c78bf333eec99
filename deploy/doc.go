// Package deploy holds the deployment files (docker, k8s, nats, postgres);
// its tests check that they parse and agree with each other.
package deploy
