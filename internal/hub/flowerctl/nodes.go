package flowerctl

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
)

// RegisterNode registers a SuperNode's public key with the SuperLink (what `flwr supernode
// register` does) and returns the node ID the SuperLink chose; name, when not empty, is the
// node's name. A SuperLink started with --enable-supernode-auth lets only SuperNodes with a
// registered key connect (without it, SuperNodes register themselves over the Fleet API).
//
// publicKeyPEM must be an ECDSA key on a NIST curve in the one form Flower compares against:
// PEM "PUBLIC KEY" (SubjectPublicKeyInfo), 64-character lines, as Go's
// pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: x509.MarshalPKIXPublicKey(key)})
// and Python's cryptography write it. The SuperLink matches the key a SuperNode signs with
// byte for byte, so a key registered in another spelling would be accepted and never match;
// RegisterNode refuses it instead.
//
// A key the SuperLink already holds gives an *Error for which IsAlreadyExists is true.
func (c *Client) RegisterNode(ctx context.Context, publicKeyPEM []byte, name string) (uint64, error) {
	const method = "RegisterNode"
	if err := checkPublicKeyPEM(publicKeyPEM); err != nil {
		return 0, c.errorf(method, err, "the public key is not one Flower can match")
	}
	body, err := c.unary(ctx, method, "/v1/control/register-node", appendRegisterNodeRequest(nil, publicKeyPEM, name))
	if err != nil {
		return 0, err
	}
	id, err := decodeRegisterNodeResponse(body)
	if err != nil {
		return 0, c.errorf(method, err, "malformed answer")
	}
	if id == 0 { // Flower answers 0 when its random node ID collided
		return 0, c.errorf(method, nil, "the SuperLink registered no node (node ID 0); try again")
	}
	return id, nil
}

// ListNodes returns the SuperNodes registered with the SuperLink (those of the caller's account,
// which is every node on a SuperLink without account authentication), unregistered ones
// included, in the SuperLink's order.
func (c *Client) ListNodes(ctx context.Context) ([]Node, error) {
	const method = "ListNodes"
	body, err := c.unary(ctx, method, "/v1/control/list-nodes", nil) // ListNodesRequest has no fields
	if err != nil {
		return nil, err
	}
	resp, err := decodeListNodesResponse(body)
	if err != nil {
		return nil, c.errorf(method, err, "malformed answer")
	}
	return resp.Nodes, nil
}

// UnregisterNode unregisters a SuperNode: it can no longer connect. Flower keeps the node, with
// status "unregistered", and its key, which cannot be registered again. A node the SuperLink
// does not know, or that is already unregistered, gives an *Error for which IsNotFound is true.
func (c *Client) UnregisterNode(ctx context.Context, nodeID uint64) error {
	_, err := c.unary(ctx, "UnregisterNode", "/v1/control/unregister-node", appendUnregisterNodeRequest(nil, nodeID))
	return err
}

// checkPublicKeyPEM checks that b is an ECDSA public key on a NIST curve in the canonical PEM
// form (see RegisterNode).
func checkPublicKeyPEM(b []byte) error {
	const form = `give the key as pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: x509.MarshalPKIXPublicKey(key)})`
	block, rest := pem.Decode(b)
	if block == nil || block.Type != "PUBLIC KEY" || len(bytes.TrimSpace(rest)) > 0 {
		return fmt.Errorf("want one PEM block of type PUBLIC KEY and nothing else: %s", form)
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return fmt.Errorf("the PEM block holds no public key (%w): %s", err, form)
	}
	ec, ok := key.(*ecdsa.PublicKey)
	if !ok {
		return fmt.Errorf("a %T, want an ECDSA key on a NIST curve (P-256, P-384 or P-521), as Flower's SuperNodes use", key)
	}
	der, err := x509.MarshalPKIXPublicKey(ec)
	if err != nil {
		return fmt.Errorf("%w: want an ECDSA key on a NIST curve (P-256, P-384 or P-521)", err)
	}
	if !bytes.Equal(b, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})) {
		return fmt.Errorf("the PEM is not in canonical form (64-character lines, \\n line ends, no headers, one trailing newline), "+
			"which the SuperLink compares byte for byte with what SuperNodes send: %s", form)
	}
	return nil
}
