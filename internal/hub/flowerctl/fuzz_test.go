package flowerctl

import (
	"bytes"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzDecodeListRuns: the decoder never panics, and what it accepts survives a round trip
// through the test encoder.
func FuzzDecodeListRuns(f *testing.F) {
	golden := mustHex(f, pythonListRuns)
	f.Add(golden)
	f.Add(golden[:len(golden)/2])
	f.Add(encodeListRunsResponse(listRunsResponse{Runs: []Run{runningRun, finishedRun}, Now: "now"}))
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x02, 0x12, 0x00})
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := decodeListRunsResponse(in)
		if err != nil {
			return
		}
		ids := map[uint64]bool{}
		for _, r := range got.Runs {
			if ids[r.ID] { // two map keys whose runs carry the same run_id: no round trip
				return
			}
			ids[r.ID] = true
		}
		again, err := decodeListRunsResponse(encodeListRunsResponse(got))
		if err != nil {
			t.Fatalf("re-encoded response does not decode: %v", err)
		}
		if diff := cmp.Diff(got, again, cmpopts.EquateNaNs(), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("round trip (-first +second):\n%s", diff)
		}
	})
}

// FuzzDecodeLogs: the stream reader never panics, stays within its limit, and gives the same
// result however the bytes are split across reads.
func FuzzDecodeLogs(f *testing.F) {
	f.Add(frame(mustHex(f, pythonLogChunk)), 0.0)
	f.Add(append(frame(encodeStreamLogsResponse(logChunk{Output: "a", Latest: 2})),
		frame(encodeStreamLogsResponse(logChunk{Output: "b", Latest: 1}))...), 1.5)
	f.Add([]byte{0, 0, 0}, 0.0)
	f.Add([]byte{0, 0, 0, 9, 0x0a, 0x07}, 3.0)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, 0.0)
	const limit = 1 << 16
	f.Fuzz(func(t *testing.T, in []byte, after float64) {
		whole, errWhole := readLogStream(bytes.NewReader(in), after, limit)
		split, errSplit := readLogStream(iotest.OneByteReader(bytes.NewReader(in)), after, limit)
		if (errWhole == nil) != (errSplit == nil) {
			t.Fatalf("errors differ: whole %v, one byte at a time %v", errWhole, errSplit)
		}
		if diff := cmp.Diff(whole, split, cmpopts.EquateNaNs()); diff != "" {
			t.Errorf("whole vs one byte at a time (-whole +split):\n%s", diff)
		}
		if len(whole.Text) > limit {
			t.Errorf("text of %d bytes exceeds the limit %d", len(whole.Text), limit)
		}
		if whole.Complete && errWhole != nil {
			t.Errorf("Complete with an error: %v", errWhole)
		}
		if whole.Latest < after {
			t.Errorf("Latest %v went below after %v", whole.Latest, after)
		}
	})
}

// FuzzDecodeListNodes: the decoder never panics, and what it accepts survives a round trip
// through the test encoder.
func FuzzDecodeListNodes(f *testing.F) {
	golden := mustHex(f, pythonListNodes)
	f.Add(golden)
	f.Add(golden[:len(golden)/2])
	f.Add(encodeListNodesResponse(listNodesResponse{Nodes: []Node{onlineNode, unregisteredNode}, Now: "now"}))
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x02, 0x5a, 0x00})
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := decodeListNodesResponse(in)
		if err != nil {
			return
		}
		again, err := decodeListNodesResponse(encodeListNodesResponse(got))
		if err != nil {
			t.Fatalf("re-encoded response does not decode: %v", err)
		}
		if diff := cmp.Diff(got, again, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("round trip (-first +second):\n%s", diff)
		}
	})
}

// FuzzDecodeRegisterNode: the decoder never panics, and the node ID it accepts survives a round
// trip.
func FuzzDecodeRegisterNode(f *testing.F) {
	f.Add(mustHex(f, pythonNodeID))
	f.Add(mustHex(f, "0800"))
	f.Add([]byte{0x08})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		id, err := decodeRegisterNodeResponse(in)
		if err != nil {
			return
		}
		again, err := decodeRegisterNodeResponse(appendUnregisterNodeRequest(nil, id)) // node_id is field 1 of both
		if err != nil || again != id {
			t.Errorf("round trip of node ID %d: %d, %v", id, again, err)
		}
	})
}
