package flowerctl

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// Test-side encoders of the response messages (the package itself only decodes them).

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendUint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendDouble(b []byte, num protowire.Number, v float64) []byte {
	if math.Float64bits(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(v))
}

func appendMessage(b []byte, num protowire.Number, m []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

// encodeRun encodes r as flwr.proto.Run. The status message is written only when one of its
// fields is set, and after the other fields as Python writes it (field order is free).
func encodeRun(r Run) []byte {
	var b []byte
	b = appendUint(b, 1, r.ID)
	b = appendString(b, 2, r.FabID)
	b = appendString(b, 3, r.FabVersion)
	b = appendString(b, 5, r.FabHash)
	b = appendString(b, 6, r.PendingAt)
	b = appendString(b, 7, r.StartingAt)
	b = appendString(b, 8, r.RunningAt)
	b = appendString(b, 9, r.FinishedAt)
	if r.Status != "" || r.SubStatus != "" || r.Details != "" {
		var s []byte
		s = appendString(s, 1, r.Status)
		s = appendString(s, 2, r.SubStatus)
		s = appendString(s, 3, r.Details)
		b = appendMessage(b, 10, s)
	}
	b = appendString(b, 11, r.FlwrAID)
	b = appendString(b, 12, r.Federation)
	b = appendUint(b, 13, r.BytesSent)
	b = appendUint(b, 14, r.BytesRecv)
	b = appendDouble(b, 15, r.ClientAppRuntime)
	b = appendString(b, 16, r.PrimaryTaskType)
	b = appendUint(b, 17, r.PrimaryTaskID)
	b = appendUint(b, 18, r.SeriesID)
	b = appendString(b, 19, r.AccountName)
	return b
}

// encodeListRunsResponse encodes flwr.proto.ListRunsResponse with one map entry per run, keyed
// by the run's ID.
func encodeListRunsResponse(resp listRunsResponse) []byte {
	var b []byte
	for _, r := range resp.Runs {
		var e []byte
		e = protowire.AppendTag(e, 1, protowire.VarintType)
		e = protowire.AppendVarint(e, r.ID)
		e = appendMessage(e, 2, encodeRun(r))
		b = appendMessage(b, 1, e)
	}
	return appendString(b, 2, resp.Now)
}

func encodeStreamLogsResponse(c logChunk) []byte {
	return appendDouble(appendString(nil, 1, c.Output), 2, c.Latest)
}

// frame prefixes m with its 4-byte big-endian length, as the SuperLink's stream does.
func frame(m []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(m))), m...)
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex in test: %v", err)
	}
	return b
}

// encodeNodeInfo encodes the fields of n that flwr.proto.NodeInfo carries (node_id 1, status 4,
// public_key 11, name 13).
func encodeNodeInfo(n Node) []byte {
	b := appendUint(nil, 1, n.ID)
	b = appendString(b, 4, n.Status)
	if len(n.PublicKeyPEM) > 0 {
		b = appendMessage(b, 11, n.PublicKeyPEM) // a bytes field: same wire form as a message
	}
	return appendString(b, 13, n.Name)
}

func encodeListNodesResponse(resp listNodesResponse) []byte {
	var b []byte
	for _, n := range resp.Nodes {
		b = appendMessage(b, 1, encodeNodeInfo(n))
	}
	return appendString(b, 2, resp.Now)
}
