// Package contracts holds the wire types and NATS subject names that
// services and the gateway share, per service and major version
// (identityv1, gatewayv1, ...), and openapi.yaml, the public REST surface.
package contracts

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document of every implemented /v1 route.
//
//go:embed openapi.yaml
var OpenAPI []byte
