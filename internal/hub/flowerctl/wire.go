package flowerctl

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// Run is one run as the Control API's ListRuns reports it (flwr.proto.Run, without
// override_config).
type Run struct {
	ID         uint64
	FabID      string // "<publisher>/<app name>", e.g. "flotilla/flotilla-fl"
	FabVersion string
	FabHash    string
	// Status is "pending", "starting", "running" or "finished"; SubStatus, once finished,
	// "completed", "failed" or "stopped"; Details says why, e.g. a failed run's error.
	Status    string
	SubStatus string
	Details   string
	// PendingAt ... FinishedAt are the SuperLink's ISO 8601 timestamps (Python's isoformat, UTC),
	// empty until the run gets there.
	PendingAt        string
	StartingAt       string
	RunningAt        string
	FinishedAt       string
	Federation       string
	FlwrAID          string
	AccountName      string
	BytesSent        uint64
	BytesRecv        uint64
	ClientAppRuntime float64 // seconds, summed over the run's ClientApps
	PrimaryTaskType  string
	PrimaryTaskID    uint64
	SeriesID         uint64
	// OverrideConfig holds the string values of the run config given at submission
	// (`flwr run --run-config 'key="value"'`); values of other types are left out.
	OverrideConfig map[string]string
}

// StatusText is the status as `flwr ls` shows it: "running", "finished:completed", ...
func (r Run) StatusText() string {
	if r.SubStatus == "" {
		return r.Status
	}
	return r.Status + ":" + r.SubStatus
}

// listRunsResponse is flwr.proto.ListRunsResponse with the run map as a slice.
type listRunsResponse struct {
	Runs []Run
	Now  string
}

// logChunk is flwr.proto.StreamLogsResponse.
type logChunk struct {
	Output string
	Latest float64
}

// appendListRunsRequest encodes flwr.proto.ListRunsRequest. Its three fields are proto3
// `optional`: the SuperLink tells "unset" from 0 (no limit means its default of 20, no run_id
// means "list"), so a nil pointer leaves a field out.
func appendListRunsRequest(b []byte, runID, limit, skip *uint64) []byte {
	for _, f := range []struct {
		num protowire.Number
		v   *uint64
	}{{1, runID}, {2, limit}, {3, skip}} {
		if f.v != nil {
			b = protowire.AppendTag(b, f.num, protowire.VarintType)
			b = protowire.AppendVarint(b, *f.v)
		}
	}
	return b
}

// appendStreamLogsRequest encodes flwr.proto.StreamLogsRequest (proto3 implicit presence:
// zero values are left out, as Python's SerializeToString does).
func appendStreamLogsRequest(b []byte, runID uint64, after float64) []byte {
	if runID != 0 {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, runID)
	}
	if bits := math.Float64bits(after); bits != 0 {
		b = protowire.AppendTag(b, 2, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, bits)
	}
	return b
}

// decodeListRunsResponse decodes flwr.proto.ListRunsResponse. Runs come newest first (by
// PendingAt, then ID), the SuperLink's own order, which the protobuf map does not keep.
func decodeListRunsResponse(b []byte) (listRunsResponse, error) {
	var resp listRunsResponse
	index := map[uint64]int{} // a repeated map key replaces the earlier entry, as in protobuf
	err := walk("ListRunsResponse", b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return consumeMessage(typ, b, func(m []byte) error {
				key, run, err := decodeRunDictEntry(m)
				if err != nil {
					return err
				}
				if i, ok := index[key]; ok {
					resp.Runs[i] = run
					return nil
				}
				index[key] = len(resp.Runs)
				resp.Runs = append(resp.Runs, run)
				return nil
			})
		case 2:
			return consumeString(typ, b, &resp.Now)
		}
		return 0, nil
	})
	if err != nil {
		return listRunsResponse{}, err
	}
	sort.SliceStable(resp.Runs, func(i, j int) bool {
		a, b := resp.Runs[i], resp.Runs[j]
		if a.PendingAt != b.PendingAt {
			return a.PendingAt > b.PendingAt
		}
		return a.ID < b.ID
	})
	return resp, nil
}

// decodeRunDictEntry decodes one map<uint64, Run> entry (key = 1, value = 2). The Run's own
// run_id wins over the key; the SuperLink sets both to the same value.
func decodeRunDictEntry(b []byte) (uint64, Run, error) {
	var key uint64
	var run Run
	err := walk("ListRunsResponse.run_dict entry", b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return consumeUint64(typ, b, &key)
		case 2:
			return consumeMessage(typ, b, func(m []byte) error { return decodeRun(m, &run) })
		}
		return 0, nil
	})
	if run.ID == 0 {
		run.ID = key
	}
	return key, run, err
}

// decodeRun merges the flwr.proto.Run in b into r (a repeated field overwrites, a repeated
// message field merges, as protobuf parsers do).
func decodeRun(b []byte, r *Run) error {
	strs := map[protowire.Number]*string{
		2: &r.FabID, 3: &r.FabVersion, 5: &r.FabHash, 6: &r.PendingAt, 7: &r.StartingAt,
		8: &r.RunningAt, 9: &r.FinishedAt, 11: &r.FlwrAID, 12: &r.Federation,
		16: &r.PrimaryTaskType, 19: &r.AccountName,
	}
	ints := map[protowire.Number]*uint64{
		1: &r.ID, 13: &r.BytesSent, 14: &r.BytesRecv, 17: &r.PrimaryTaskID, 18: &r.SeriesID,
	}
	return walk("Run", b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		if p, ok := strs[num]; ok {
			return consumeString(typ, b, p)
		}
		if p, ok := ints[num]; ok {
			return consumeUint64(typ, b, p)
		}
		switch num {
		case 10:
			return consumeMessage(typ, b, func(m []byte) error { return decodeRunStatus(m, r) })
		case 15:
			return consumeDouble(typ, b, &r.ClientAppRuntime)
		case 4:
			return consumeMessage(typ, b, func(m []byte) error { return decodeConfigEntry(m, r) })
		}
		return 0, nil // unknown fields
	})
}

// decodeConfigEntry merges one map<string, Scalar> entry of override_config (key = 1, value =
// 2) into r when the Scalar is a string (field 14).
func decodeConfigEntry(b []byte, r *Run) error {
	var key, value string
	isString := false
	err := walk("Run.override_config entry", b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return consumeString(typ, b, &key)
		case 2:
			return consumeMessage(typ, b, func(m []byte) error {
				return walk("Scalar", m, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
					if num == 14 {
						isString = true
						return consumeString(typ, b, &value)
					}
					return 0, nil
				})
			})
		}
		return 0, nil
	})
	if err != nil || !isString {
		return err
	}
	if r.OverrideConfig == nil {
		r.OverrideConfig = map[string]string{}
	}
	r.OverrideConfig[key] = value
	return nil
}

// decodeRunStatus merges flwr.proto.RunStatus into r.
func decodeRunStatus(b []byte, r *Run) error {
	return walk("RunStatus", b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return consumeString(typ, b, &r.Status)
		case 2:
			return consumeString(typ, b, &r.SubStatus)
		case 3:
			return consumeString(typ, b, &r.Details)
		}
		return 0, nil
	})
}

// decodeStreamLogsResponse decodes flwr.proto.StreamLogsResponse.
func decodeStreamLogsResponse(b []byte) (logChunk, error) {
	var c logChunk
	err := walk("StreamLogsResponse", b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return consumeString(typ, b, &c.Output)
		case 2:
			return consumeDouble(typ, b, &c.Latest)
		}
		return 0, nil
	})
	return c, err
}

// walk calls field for every field of the message in b, with the bytes after the field's tag.
// field returns how many of them it consumed, or 0 to have the field skipped as unknown (an
// unknown number, or a known number with another wire type: protobuf parsers keep such fields
// as unknown too).
func walk(msg string, b []byte, field func(protowire.Number, protowire.Type, []byte) (int, error)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%s: %w", msg, protowire.ParseError(n))
		}
		b = b[n:]
		m, err := field(num, typ, b)
		if err != nil {
			return fmt.Errorf("%s field %d: %w", msg, num, err)
		}
		if m == 0 {
			if m = protowire.ConsumeFieldValue(num, typ, b); m < 0 {
				return fmt.Errorf("%s field %d: %w", msg, num, protowire.ParseError(m))
			}
		}
		b = b[m:]
	}
	return nil
}

func consumeUint64(typ protowire.Type, b []byte, dst *uint64) (int, error) {
	if typ != protowire.VarintType {
		return 0, nil
	}
	v, n := protowire.ConsumeVarint(b)
	if n < 0 {
		return 0, protowire.ParseError(n)
	}
	*dst = v
	return n, nil
}

func consumeDouble(typ protowire.Type, b []byte, dst *float64) (int, error) {
	if typ != protowire.Fixed64Type {
		return 0, nil
	}
	v, n := protowire.ConsumeFixed64(b)
	if n < 0 {
		return 0, protowire.ParseError(n)
	}
	*dst = math.Float64frombits(v)
	return n, nil
}

var errInvalidUTF8 = errors.New("string is not valid UTF-8")

func consumeString(typ protowire.Type, b []byte, dst *string) (int, error) {
	if typ != protowire.BytesType {
		return 0, nil
	}
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return 0, protowire.ParseError(n)
	}
	if !utf8.Valid(v) { // proto3 strings are UTF-8; Python's parser rejects them too
		return 0, errInvalidUTF8
	}
	*dst = string(v)
	return n, nil
}

func consumeMessage(typ protowire.Type, b []byte, decode func([]byte) error) (int, error) {
	if typ != protowire.BytesType {
		return 0, nil
	}
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return 0, protowire.ParseError(n)
	}
	return n, decode(v)
}

// Node is one SuperNode as the Control API's ListNodes reports it (flwr.proto.NodeInfo, in part).
type Node struct {
	// ID is the SuperLink's random 64-bit node ID (any uint64 but 0 and the SuperLink's own).
	ID uint64
	// PublicKeyPEM is the key the node was registered with, byte for byte as registered: PEM
	// SubjectPublicKeyInfo.
	PublicKeyPEM []byte
	// Status is "registered" (never connected), "online", "offline" or "unregistered". An
	// unregistered node stays listed, and its key stays taken: it cannot be registered again.
	Status string
	// Name is the name given at registration, if any.
	Name string
}

// listNodesResponse is flwr.proto.ListNodesResponse.
type listNodesResponse struct {
	Nodes []Node
	Now   string
}

// appendRegisterNodeRequest encodes flwr.proto.RegisterNodeRequest: public_key (1) and, when not
// empty, the proto3 `optional` name (3). location (2) is not sent.
func appendRegisterNodeRequest(b, publicKey []byte, name string) []byte {
	if len(publicKey) > 0 {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, publicKey)
	}
	if name != "" {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendString(b, name)
	}
	return b
}

// appendUnregisterNodeRequest encodes flwr.proto.UnregisterNodeRequest (node_id = 1, implicit
// presence: 0 is left out).
func appendUnregisterNodeRequest(b []byte, nodeID uint64) []byte {
	if nodeID != 0 {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, nodeID)
	}
	return b
}

// decodeRegisterNodeResponse decodes flwr.proto.RegisterNodeResponse: its node_id (1), 0 when
// absent.
func decodeRegisterNodeResponse(b []byte) (uint64, error) {
	var id uint64
	err := walk("RegisterNodeResponse", b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		if num == 1 {
			return consumeUint64(typ, b, &id)
		}
		return 0, nil
	})
	return id, err
}

// decodeListNodesResponse decodes flwr.proto.ListNodesResponse, nodes in the SuperLink's order.
func decodeListNodesResponse(b []byte) (listNodesResponse, error) {
	var resp listNodesResponse
	err := walk("ListNodesResponse", b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return consumeMessage(typ, b, func(m []byte) error {
				var n Node
				if err := decodeNodeInfo(m, &n); err != nil {
					return err
				}
				resp.Nodes = append(resp.Nodes, n)
				return nil
			})
		case 2:
			return consumeString(typ, b, &resp.Now)
		}
		return 0, nil
	})
	if err != nil {
		return listNodesResponse{}, err
	}
	return resp, nil
}

// decodeNodeInfo merges the flwr.proto.NodeInfo in b into n: node_id (1), status (4),
// public_key (11) and name (13); the owner, timestamps, heartbeat and location are skipped.
func decodeNodeInfo(b []byte, n *Node) error {
	return walk("NodeInfo", b, func(num protowire.Number, typ protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return consumeUint64(typ, b, &n.ID)
		case 4:
			return consumeString(typ, b, &n.Status)
		case 11:
			return consumeBytes(typ, b, &n.PublicKeyPEM)
		case 13:
			return consumeString(typ, b, &n.Name)
		}
		return 0, nil
	})
}

func consumeBytes(typ protowire.Type, b []byte, dst *[]byte) (int, error) {
	if typ != protowire.BytesType {
		return 0, nil
	}
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return 0, protowire.ParseError(n)
	}
	*dst = append([]byte(nil), v...) // not an alias of the answer's buffer
	return n, nil
}
