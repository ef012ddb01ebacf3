// Package flowerctl is a minimal client for the Control API of a Flower 1.42 SuperLink: it lists
// a federation's runs, reads a run's log, and registers, lists and unregisters the SuperNodes'
// public keys (which a SuperLink started with --enable-supernode-auth lets connect). The log is
// the only place the ServerApp's output (Flower's "[ROUND r/R]" lines, the example app's
// FLOTILLA_PROGRESS lines) can be read: Flower's SuperExec sends the ServerApp's stdout to the
// SuperLink, never to a pod log. Open-source Flower authenticates no Control API caller; a
// SuperLink the hub runs sits behind a front (internal/hub/flowerfront) that wants the hub's
// bearer token, Client.Token.
//
// Two ideas a reader needs:
//
//   - Flower 1.42's Control API is protobuf over plain HTTP, not gRPC. The SuperLink (FastAPI on
//     uvicorn, HTTP/1.1, TLS when started with --ssl-*) serves POST /v1/control/<kebab-name>,
//     request and response bodies content-type application/protobuf; server-streaming methods
//     answer application/flower-protobuf-stream, a sequence of frames, each a 4-byte big-endian
//     length then the message. Errors are HTTP statuses with a JSON body {"code","detail"}.
//     The `flwr` CLI speaks exactly this (flwr/supercore/protobuf/client.py); the gRPC Control
//     server of Flower <= 1.41 starts only with the internal FLWR_INTERNAL_GRPC_CONTROL_API=1.
//   - The messages are encoded and decoded by hand with protowire (field numbers from flwr 1.42's
//     flwr/proto/control.proto and run.proto), so no generated code and no gRPC module are
//     needed. Decoders skip unknown fields and return an error, never panic, on malformed input.
//
// StreamLogs (Client.Logs) answers everything logged after a timestamp; while the run is not
// finished the SuperLink keeps the stream open and polls its log store every 0.5 s; once the run
// is finished it sends what is left and ends the stream. Timestamps are Unix seconds (float).
package flowerctl
