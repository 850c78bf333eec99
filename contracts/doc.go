// Package contracts holds the wire types and NATS subject names that
// services and the gateway share, per service and major version
// (identityv1, ledgerv1, ...), and openapi.yaml, the public REST surface.
//
// Every request, reply and event type that crosses a process boundary lives
// in its service's package, with a small typed client (ledgerv1.Client,
// identityv1.Client, periodsv1.Client) that other services use instead of
// decoding replies by hand; rpc.Caller is what those clients need of a
// NATS client. Amounts on the wire are money.Amount: exact decimals.
package contracts

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document of every implemented /v1 route.
//
//go:embed openapi.yaml
var OpenAPI []byte
