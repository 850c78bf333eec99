// Package apiclients checks that the generators API users reach for turn
// contracts/openapi.yaml into code that compiles: oapi-codegen with its
// default options (Go, pinned as a tool in the root go.mod) and
// openapi-typescript (pinned in ts/package-lock.json, installed by
// `make tools`).
package apiclients
