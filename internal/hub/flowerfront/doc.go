// Package flowerfront is the network face of a federation's Flower SuperLink: a reverse proxy
// that runs in the SuperLink's pod, serves HTTPS to the network and forwards to the SuperLink,
// which listens on the pod's loopback only.
//
// The one idea a reader needs: Flower 1.42's SuperLink serves three APIs on one HTTP port, and
// authenticates only two of them. The Fleet API (/v1/fleet/, called by SuperNodes on other
// clusters) checks each SuperNode's signature, and the Runtime API (/v1/runtime/, called by the
// ServerApp) checks the SuperExec's HMAC and then task tokens; the front passes both through, with
// /health. The Control API (/v1/control/: list and start runs, stream logs, register SuperNodes)
// authenticates no one in open-source Flower, so the front forwards it only with the hub's bearer
// token (Authorization: Bearer <token>, compared in constant time) and answers 403 otherwise;
// users reach it with `kubectl port-forward` to the SuperLink pod. Every other path is 404. A
// SuperNode may not register itself (/v1/fleet/register-node and unregister-node are 403): Flower
// refuses self-registration only with --enable-supernode-auth, which it accepts only on a TLS
// SuperLink, and this one is plain HTTP on loopback; so the front refuses it, and only the keys
// the hub registers through the Control API are admitted, each request signed with its key.
//
// The policy is a pure function of the request path (classify). A path that is not already in
// clean form (".", "..", "//", a trailing "/", any percent-encoding or backslash) is refused with
// 400 before it is matched, so that no spelling the SuperLink would read differently can carry a
// Control request under a Fleet prefix. The Authorization header never reaches Flower, and the
// X-Forwarded-* headers Flower's server (uvicorn, which trusts them from loopback) reads are the
// front's own, never the client's.
//
// Flower streams some answers (/v1/control/stream-logs): the proxy flushes every write at once,
// and the server has no overall write timeout.
package flowerfront
