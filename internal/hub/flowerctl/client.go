package flowerctl

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/flotilla/flotilla/internal/egress"
)

const (
	protobufType       = "application/protobuf"
	protobufStreamType = "application/flower-protobuf-stream"

	// DefaultMaxMessageBytes bounds one response message (and the text one Logs call gathers).
	DefaultMaxMessageBytes = 64 << 20
	// DefaultUnaryTimeout bounds a unary call whose context has no deadline (the flwr CLI's 30 s).
	DefaultUnaryTimeout = 30 * time.Second
)

// Client calls one SuperLink's Control API. Use it by pointer; it is safe for concurrent use
// once its fields are set.
type Client struct {
	// Address is the SuperLink's host:port (its --host/--port; the "address" of a flwr CLI
	// connection in config.toml), e.g. "flower-superlink.flower.svc:8000".
	Address string
	// TLS, when set, makes the client speak HTTPS (a SuperLink started with --ssl-*): RootCAs
	// should hold the SuperLink's CA (ca.crt). nil means plain HTTP (a --insecure SuperLink).
	TLS *tls.Config
	// HTTP sends the requests; nil means a client built from TLS with the egress guard
	// (internal/egress): no proxy from the environment, no redirect followed, and no metadata
	// address dialed, nor a loopback, unspecified or link-local one unless AllowLocal. A given
	// client must carry the TLS settings and any guard itself.
	HTTP *http.Client
	// AllowLocal lets the built-in client dial loopback and link-local addresses (a SuperLink
	// the hub itself runs and reaches on loopback, tests); metadata addresses stay refused.
	AllowLocal bool
	// MaxMessageBytes bounds one response message; 0 means DefaultMaxMessageBytes.
	MaxMessageBytes int
	// Token, when set, is sent with every request as Authorization: Bearer <Token>: the hub's
	// token for the front (internal/hub/flowerfront) of a SuperLink the hub runs, which forwards
	// the Control API only with it and strips it (open-source Flower reads no such header).
	Token string

	once    sync.Once
	builtin *http.Client
}

// ListRunsOptions pages through ListRuns.
type ListRunsOptions struct {
	// Limit is the most runs to return, newest first; 0 means the SuperLink's default (20).
	Limit uint64
	// Skip leaves out that many of the newest runs.
	Skip uint64
}

// ListRuns returns the runs of the caller's account (every run, on a SuperLink without account
// authentication), newest first.
func (c *Client) ListRuns(ctx context.Context, opts ListRunsOptions) ([]Run, error) {
	var limit, skip *uint64
	if opts.Limit > 0 {
		limit = &opts.Limit
	}
	if opts.Skip > 0 {
		skip = &opts.Skip
	}
	resp, err := c.listRuns(ctx, appendListRunsRequest(nil, nil, limit, skip))
	return resp.Runs, err
}

// GetRun returns one run. A run the SuperLink does not know (an unknown ID, or a SuperLink that
// restarted without --database) gives an *Error for which IsNotFound is true.
func (c *Client) GetRun(ctx context.Context, runID uint64) (Run, error) {
	resp, err := c.listRuns(ctx, appendListRunsRequest(nil, &runID, nil, nil))
	if err != nil {
		return Run{}, err
	}
	for _, r := range resp.Runs {
		if r.ID == runID {
			return r, nil
		}
	}
	return Run{}, c.errorf("ListRuns", nil, "the answer for run %d does not contain that run", runID)
}

func (c *Client) listRuns(ctx context.Context, req []byte) (listRunsResponse, error) {
	const method = "ListRuns"
	body, err := c.unary(ctx, method, "/v1/control/list-runs", req)
	if err != nil {
		return listRunsResponse{}, err
	}
	out, err := decodeListRunsResponse(body)
	if err != nil {
		return listRunsResponse{}, c.errorf(method, err, "malformed answer")
	}
	return out, nil
}

// unary sends one unary Control API request and returns the answer's message, at most
// MaxMessageBytes long. Without a deadline in ctx, the call has DefaultUnaryTimeout.
func (c *Client) unary(ctx context.Context, method, path string, req []byte) ([]byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultUnaryTimeout)
		defer cancel()
	}
	resp, err := c.post(ctx, method, path, protobufType, req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	limit := c.maxMessage()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return nil, c.errorf(method, err, "reading the answer")
	}
	if len(body) > limit {
		return nil, c.errorf(method, nil,
			"the answer is larger than %d bytes; raise Client.MaxMessageBytes", limit)
	}
	return body, nil
}

// Log is what one Logs call read of a run's log.
type Log struct {
	// Text is the log output after the requested timestamp, in order.
	Text string
	// Latest is the timestamp (Unix seconds) of the newest entry in Text, or the requested
	// timestamp when Text is empty. Pass it to the next call to read only newer output.
	Latest float64
	// Complete means the SuperLink ended the stream: the run is finished and Text holds all of
	// its log after the requested timestamp.
	Complete bool
}

// Logs reads the log of a run (its ServerApp's output) written after the timestamp after (Unix
// seconds; 0 for all of it). It reads the stream until the SuperLink ends it, which it does once
// the run is finished, or until ctx is done: a stream that was open when ctx ended is not an
// error, Logs returns what arrived with Complete false. So give ctx a deadline for a run that
// may still be running.
func (c *Client) Logs(ctx context.Context, runID uint64, after float64) (Log, error) {
	const method = "StreamLogs"
	resp, err := c.post(ctx, method, "/v1/control/stream-logs", protobufStreamType,
		appendStreamLogsRequest(nil, runID, after))
	if err != nil {
		return Log{Latest: after}, err
	}
	defer func() { _ = resp.Body.Close() }()
	log, err := readLogStream(resp.Body, after, c.maxMessage())
	if err != nil && ctx.Err() == nil {
		return log, c.errorf(method, err, "reading the log stream of run %d", runID)
	}
	return log, nil
}

// readLogStream reads StreamLogsResponse frames (a 4-byte big-endian length, then the message)
// until r ends, and joins them. It stops early, without an error and with Complete false, once
// the text would exceed limit bytes.
func readLogStream(r io.Reader, after float64, limit int) (Log, error) {
	log := Log{Latest: after}
	var text strings.Builder
	var header [4]byte
	for {
		if _, err := io.ReadFull(r, header[:]); err != nil {
			if errors.Is(err, io.EOF) {
				log.Text, log.Complete = text.String(), true
				return log, nil
			}
			log.Text = text.String()
			return log, frameErr(err)
		}
		size := uint64(header[0])<<24 | uint64(header[1])<<16 | uint64(header[2])<<8 | uint64(header[3])
		if size > uint64(limit) {
			log.Text = text.String()
			return log, fmt.Errorf("a log frame of %d bytes exceeds the limit of %d; raise Client.MaxMessageBytes", size, limit)
		}
		frame := make([]byte, size)
		if _, err := io.ReadFull(r, frame); err != nil {
			log.Text = text.String()
			return log, frameErr(err)
		}
		chunk, err := decodeStreamLogsResponse(frame)
		if err != nil {
			log.Text = text.String()
			return log, err
		}
		if text.Len()+len(chunk.Output) > limit {
			log.Text = text.String()
			return log, nil
		}
		text.WriteString(chunk.Output)
		if chunk.Latest > log.Latest {
			log.Latest = chunk.Latest
		}
	}
}

func frameErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the stream ended inside a frame")
	}
	return err
}

// post sends one Control API request and returns the response if it is a 200 with the wanted
// content type; otherwise an *Error.
func (c *Client) post(ctx context.Context, method, path, accept string, body []byte) (*http.Response, error) {
	if c.Address == "" || strings.Contains(c.Address, "/") {
		return nil, c.errorf(method, nil,
			"Client.Address %q is not host:port: give the SuperLink's host:port without a scheme or path (set Client.TLS for HTTPS)",
			c.Address)
	}
	scheme := "http"
	if c.TLS != nil {
		scheme = "https"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, scheme+"://"+c.Address+path, bytes.NewReader(body))
	if err != nil {
		return nil, c.errorf(method, err, "building the request")
	}
	req.Header.Set("Content-Type", protobufType)
	req.Header.Set("Accept", accept)
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("User-Agent", "flotilla-flowerctl")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, c.errorf(method, err, "%s", c.transportHint(err))
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		_ = resp.Body.Close()
		return nil, c.errorf(method, fmt.Errorf("%w: HTTP %d redirecting to %q", egress.ErrRefused, resp.StatusCode, resp.Header.Get("Location")),
			"redirects are not followed: give the SuperLink's own host:port")
	}
	if resp.StatusCode != http.StatusOK {
		defer func() { _ = resp.Body.Close() }()
		return nil, c.statusError(method, resp)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != accept {
		_ = resp.Body.Close()
		return nil, c.errorf(method, nil,
			"the answer has Content-Type %q, want %q: is %s the HTTP port of a Flower 1.42 or newer SuperLink?",
			resp.Header.Get("Content-Type"), accept, c.Address)
	}
	return resp, nil
}

func (c *Client) transportHint(err error) string {
	msg := err.Error()
	switch {
	case c.TLS == nil && (errors.Is(err, io.EOF) || strings.Contains(msg, "malformed HTTP")):
		// A TLS SuperLink (uvicorn) closes a plain HTTP connection without an answer.
		return "request failed; if the SuperLink serves TLS (started with --ssl-*), set Client.TLS with its CA"
	case c.TLS != nil && (strings.Contains(msg, "HTTP response to HTTPS client") ||
		strings.Contains(msg, "does not look like a TLS handshake")):
		return "the SuperLink speaks plain HTTP (started with --insecure): leave Client.TLS nil"
	}
	return "request failed"
}

func (c *Client) maxMessage() int {
	if c.MaxMessageBytes > 0 {
		return c.MaxMessageBytes
	}
	return DefaultMaxMessageBytes
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	c.once.Do(func() {
		// The address may be a requester's word (a FederatedLearning's spec.server.superlink):
		// egress's transport checks each resolved address and dials through no proxy.
		t := egress.Transport(c.AllowLocal)
		t.TLSClientConfig = c.TLS.Clone()
		t.MaxIdleConnsPerHost = 4
		c.builtin = &http.Client{Transport: t, CheckRedirect: egress.NoRedirect}
	})
	return c.builtin
}

// CloseIdleConnections closes the idle connections of the client's built-in HTTP client.
func (c *Client) CloseIdleConnections() {
	c.httpClient().CloseIdleConnections()
}
