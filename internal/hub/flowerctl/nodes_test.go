package flowerctl

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Each node call sends its message to its path, with the hub's token when the client has one,
// and decodes the answer.
func TestNodeCalls(t *testing.T) {
	type request struct{ Path, BodyHex, Authorization string }
	tests := map[string]struct {
		answer      []byte
		token       string
		call        func(context.Context, *Client) (any, error)
		want        any
		wantRequest request
	}{
		"register a named node": {
			answer: mustHex(t, pythonNodeID),
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.RegisterNode(ctx, []byte(pythonKeyA), "cluster-a")
			},
			want:        uint64(bigNodeID),
			wantRequest: request{Path: "/v1/control/register-node", BodyHex: pythonRegisterNodeNamed},
		},
		"register with the hub's token": {
			answer: mustHex(t, pythonNodeID),
			token:  "hub-token",
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.RegisterNode(ctx, []byte(pythonKeyA), "")
			},
			want:        uint64(bigNodeID),
			wantRequest: request{Path: "/v1/control/register-node", BodyHex: pythonRegisterNode, Authorization: "Bearer hub-token"},
		},
		"list": {
			answer:      mustHex(t, pythonListNodes),
			call:        func(ctx context.Context, c *Client) (any, error) { return c.ListNodes(ctx) },
			want:        []Node{onlineNode, unregisteredNode},
			wantRequest: request{Path: "/v1/control/list-nodes"},
		},
		"list none": {
			call:        func(ctx context.Context, c *Client) (any, error) { return c.ListNodes(ctx) },
			want:        []Node(nil),
			wantRequest: request{Path: "/v1/control/list-nodes"},
		},
		"unregister": {
			token:       "hub-token",
			call:        func(ctx context.Context, c *Client) (any, error) { return nil, c.UnregisterNode(ctx, bigNodeID) },
			wantRequest: request{Path: "/v1/control/unregister-node", BodyHex: pythonNodeID, Authorization: "Bearer hub-token"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f, c := newFakeLink(t, false, answer(protobufType, http.StatusOK, tc.answer))
			c.Token = tc.token
			got, err := tc.call(context.Background(), c)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			gotRequest := request{Path: f.got.path, BodyHex: f.got.bodyHex, Authorization: f.authorization}
			if diff := cmp.Diff(tc.wantRequest, gotRequest); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

// The SuperLink's errors as Flower 1.42 sends them (flwr/supercore/error/catalog.py), and the
// front's refusal.
func TestNodeErrors(t *testing.T) {
	jsonError := func(status int, body string) http.HandlerFunc {
		return answer("application/json", status, []byte(body))
	}
	register := func(ctx context.Context, c *Client) error {
		_, err := c.RegisterNode(ctx, []byte(pythonKeyA), "")
		return err
	}
	tests := map[string]struct {
		handler       http.HandlerFunc
		call          func(context.Context, *Client) error
		want          *Error // compared without Address and Err
		wantIn        string
		alreadyExists bool
		notFound      bool
	}{
		"key already registered": {
			handler:       jsonError(412, `{"code":23,"detail":"Public key already in use."}`),
			call:          register,
			want:          &Error{Method: "RegisterNode", HTTPStatus: 412, Code: 23, Detail: "Public key already in use."},
			wantIn:        ": RegisterNode: HTTP 412: Public key already in use. (Flower error code 23)",
			alreadyExists: true,
		},
		"key not valid: also 412, another code": {
			handler: jsonError(412, `{"code":22,"detail":"The provided public key is not valid."}`),
			call:    register,
			want:    &Error{Method: "RegisterNode", HTTPStatus: 412, Code: 22, Detail: "The provided public key is not valid."},
		},
		"code 23 under another status": {
			handler: jsonError(500, `{"code":23,"detail":"x"}`),
			call:    register,
			want:    &Error{Method: "RegisterNode", HTTPStatus: 500, Code: 23, Detail: "x"},
		},
		"unregister an unknown node": {
			handler:  jsonError(404, `{"code":24,"detail":"Node ID not found for account."}`),
			call:     func(ctx context.Context, c *Client) error { return c.UnregisterNode(ctx, 5) },
			want:     &Error{Method: "UnregisterNode", HTTPStatus: 404, Code: 24, Detail: "Node ID not found for account."},
			notFound: true,
		},
		"node ID 0": {
			handler: answer(protobufType, 200, mustHex(t, "0800")),
			call:    register,
			wantIn:  "RegisterNode: the SuperLink registered no node (node ID 0); try again",
		},
		"malformed list": {
			handler: answer(protobufType, 200, []byte{0x0a, 0x05}),
			call:    func(ctx context.Context, c *Client) error { _, err := c.ListNodes(ctx); return err },
			wantIn:  "ListNodes: malformed answer: ListNodesResponse field 1: ",
		},
		"refused by the front": {
			handler: answer("text/plain; charset=utf-8", 403, []byte("the Control API of this Flower SuperLink is reachable only by the Flotilla hub\n")),
			call:    func(ctx context.Context, c *Client) error { _, err := c.ListNodes(ctx); return err },
			want:    &Error{Method: "ListNodes", HTTPStatus: 403, Detail: "the Control API of this Flower SuperLink is reachable only by the Flotilla hub"},
		},
		"a key Flower could not match is not sent": {
			handler: answer(protobufType, 200, mustHex(t, pythonNodeID)),
			call: func(ctx context.Context, c *Client) error {
				_, err := c.RegisterNode(ctx, []byte(strings.ReplaceAll(pythonKeyA, "\n", "\r\n")), "")
				return err
			},
			wantIn: "RegisterNode: the public key is not one Flower can match: the PEM is not in canonical form",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f, c := newFakeLink(t, false, tc.handler)
			err := tc.call(context.Background(), c)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error = %v (%T), want an *Error", err, err)
			}
			if tc.want != nil {
				if diff := cmp.Diff(tc.want, e, cmpopts.IgnoreFields(Error{}, "Address", "Err")); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
			}
			if !strings.Contains(errText(err), tc.wantIn) {
				t.Errorf("error %q does not contain %q", err, tc.wantIn)
			}
			if IsAlreadyExists(err) != tc.alreadyExists || IsNotFound(err) != tc.notFound {
				t.Errorf("IsAlreadyExists, IsNotFound = %v, %v; want %v, %v", IsAlreadyExists(err), IsNotFound(err), tc.alreadyExists, tc.notFound)
			}
			if strings.Contains(name, "not sent") && f.got.path != "" {
				t.Errorf("the SuperLink got a request to %s", f.got.path)
			}
		})
	}
}

func TestCheckPublicKeyPEM(t *testing.T) {
	spki := func(key any) []byte {
		der, err := x509.MarshalPKIXPublicKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	}
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 1024)
	edKey, _, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(&p256.PublicKey)
	tests := map[string]struct {
		in     []byte
		wantIn string // "" means accepted
	}{
		"Python's P-256 key":  {in: []byte(pythonKeyA)},
		"Go's P-256 key":      {in: spki(&p256.PublicKey)},
		"Go's P-384 key":      {in: spki(&p384.PublicKey)},
		"CRLF line ends":      {in: []byte(strings.ReplaceAll(pythonKeyA, "\n", "\r\n")), wantIn: "not in canonical form"},
		"no trailing newline": {in: []byte(strings.TrimSuffix(pythonKeyA, "\n")), wantIn: "not in canonical form"},
		"a PEM header":        {in: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Headers: map[string]string{"a": "b"}, Bytes: der}), wantIn: "not in canonical form"},
		"DER, not PEM":        {in: der, wantIn: "want one PEM block of type PUBLIC KEY"},
		"another block type":  {in: pem.EncodeToMemory(&pem.Block{Type: "EC PUBLIC KEY", Bytes: der}), wantIn: "want one PEM block of type PUBLIC KEY"},
		"two keys":            {in: []byte(pythonKeyA + pythonKeyB), wantIn: "and nothing else"},
		"not a key":           {in: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte("x")}), wantIn: "the PEM block holds no public key (asn1: "},
		"RSA key":             {in: spki(&rsaKey.PublicKey), wantIn: "a *rsa.PublicKey, want an ECDSA key on a NIST curve"},
		"Ed25519 key":         {in: spki(edKey), wantIn: "a ed25519.PublicKey, want an ECDSA key"},
		"empty":               {in: nil, wantIn: "want one PEM block"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := checkPublicKeyPEM(tc.in)
			switch {
			case tc.wantIn == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.wantIn != "" && (err == nil || !strings.Contains(err.Error(), tc.wantIn)):
				t.Errorf("error = %v, want one containing %q", err, tc.wantIn)
			}
		})
	}
}
