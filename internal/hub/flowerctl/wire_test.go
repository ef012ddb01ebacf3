package flowerctl

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
)

// Golden bytes below come from flwr 1.42's generated Python classes
// (flwr.proto.control_pb2 / run_pb2), SerializeToString(deterministic=True).

const (
	bigRunID = 7596903672728498576
	// pythonListRuns is a ListRunsResponse with two runs: bigRunID (every field set, including
	// override_config {"num-server-rounds": Scalar(sint64=1)}, which the decoder skips) and run 3
	// (running, with details), now = "2026-08-04T10:00:00+00:00".
	pythonListRuns = "0a9d020890e3deaebef4e7b6691290020890e3deaebef4e7b6691214666c6f74696c6c612f666c6f74696c6c612d666c1a05312e302e3022170a116e756d2d7365727665722d726f756e6473120240022a0a32363863633932396162321b323032362d30382d30345430393a35393a34302e312b30303a30303a19323032362d30382d30345430393a35393a34312b30303a30304219323032362d30382d30345430393a35393a34322b30303a30304a19323032362d30382d30345430393a35393a35352b30303a303052150a0866696e69736865641209636f6d706c657465645a0a7379735f6e6f61757468620764656661756c7468d20970ae2c79000000000000044082010973657276657261707088012a9001099a01063c6e6f6e653e0a3f0803123b08031203782f791a03302e313219323032362d30382d30345431303a30303a30302b30303a303052120a0772756e6e696e671a07726f756e6420321219323032362d30382d30345431303a30303a30302b30303a3030"
	// pythonLogChunk is StreamLogsResponse(log_output="[ROUND 1/1]\nFLOTILLA_PROGRESS {}\n",
	// latest_timestamp=1754300001.5).
	pythonLogChunk = "0a215b524f554e4420312f315d0a464c4f54494c4c415f50524f4752455353207b7d0a11000060981f24da41"
)

var (
	finishedRun = Run{
		ID: bigRunID, FabID: "flotilla/flotilla-fl", FabVersion: "1.0.0", FabHash: "268cc929ab",
		Status: "finished", SubStatus: "completed",
		PendingAt: "2026-08-04T09:59:40.1+00:00", StartingAt: "2026-08-04T09:59:41+00:00",
		RunningAt: "2026-08-04T09:59:42+00:00", FinishedAt: "2026-08-04T09:59:55+00:00",
		Federation: "default", FlwrAID: "sys_noauth", AccountName: "<none>",
		BytesSent: 1234, BytesRecv: 5678, ClientAppRuntime: 2.5,
		PrimaryTaskType: "serverapp", PrimaryTaskID: 42, SeriesID: 9,
	}
	runningRun = Run{
		ID: 3, FabID: "x/y", FabVersion: "0.1", PendingAt: "2026-08-04T10:00:00+00:00",
		Status: "running", Details: "round 2",
	}
)

func TestAppendListRunsRequest(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	tests := map[string]struct {
		runID, limit, skip *uint64
		wantHex            string
	}{
		"nothing set":                      {wantHex: ""},
		"run id":                           {runID: u(bigRunID), wantHex: "0890e3deaebef4e7b669"},
		"explicit zero limit is sent":      {limit: u(0), skip: u(5), wantHex: "10001805"},
		"limit 100":                        {limit: u(100), wantHex: "1064"},
		"all three, in field number order": {runID: u(1), limit: u(2), skip: u(3), wantHex: "080110021803"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := hex.EncodeToString(appendListRunsRequest(nil, tc.runID, tc.limit, tc.skip))
			if diff := cmp.Diff(tc.wantHex, got); diff != "" {
				t.Errorf("encoding (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppendStreamLogsRequest(t *testing.T) {
	tests := map[string]struct {
		runID   uint64
		after   float64
		wantHex string
	}{
		"run and timestamp":         {runID: bigRunID, after: 1754300000.25, wantHex: "0890e3deaebef4e7b66911000010981f24da41"},
		"zero timestamp left out":   {runID: 1, wantHex: "0801"},
		"zero run id left out":      {after: 1754300000.25, wantHex: "11000010981f24da41"},
		"negative zero is not zero": {runID: 1, after: negZero(), wantHex: "0801110000000000000080"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := hex.EncodeToString(appendStreamLogsRequest(nil, tc.runID, tc.after))
			if diff := cmp.Diff(tc.wantHex, got); diff != "" {
				t.Errorf("encoding (-want +got):\n%s", diff)
			}
		})
	}
}

func negZero() float64 {
	z := 0.0
	return -z
}

func TestDecodeListRunsResponse(t *testing.T) {
	handBuilt := encodeListRunsResponse(listRunsResponse{Runs: []Run{runningRun, finishedRun}, Now: "now"})
	withUnknown := append([]byte(nil), handBuilt...)
	withUnknown = protowire.AppendTag(withUnknown, 99, protowire.VarintType) // unknown varint
	withUnknown = protowire.AppendVarint(withUnknown, 1)
	withUnknown = protowire.AppendTag(withUnknown, 2, protowire.VarintType) // "now" as a varint: unknown
	withUnknown = protowire.AppendVarint(withUnknown, 7)
	withUnknown = protowire.AppendTag(withUnknown, 50, protowire.StartGroupType) // unknown group
	withUnknown = protowire.AppendTag(withUnknown, 1, protowire.Fixed32Type)
	withUnknown = protowire.AppendFixed32(withUnknown, 5)
	withUnknown = protowire.AppendTag(withUnknown, 50, protowire.EndGroupType)

	// A repeated map key replaces the earlier entry; a repeated status message merges.
	first := encodeListRunsResponse(listRunsResponse{Runs: []Run{{ID: 3, FabID: "old"}}})
	statusAgain := appendMessage(encodeRun(Run{ID: 3, FabID: "new", Status: "finished"}), 10,
		appendString(nil, 2, "failed"))
	repeated := append(first, appendMessage(nil, 1,
		appendMessage(appendUint(nil, 1, 3), 2, statusAgain))...)

	// A map entry whose Run has no run_id takes the key.
	keyOnly := appendMessage(nil, 1, appendMessage(appendUint(nil, 1, 8), 2, appendString(nil, 2, "a/b")))

	tests := map[string]struct {
		in      []byte
		want    listRunsResponse
		wantErr string
	}{
		"python golden, two runs": {
			in:   mustHex(t, pythonListRuns),
			want: listRunsResponse{Runs: []Run{runningRun, finishedRun}, Now: "2026-08-04T10:00:00+00:00"},
		},
		"hand-built, two runs, newest first": {
			in:   handBuilt,
			want: listRunsResponse{Runs: []Run{runningRun, finishedRun}, Now: "now"},
		},
		"empty":                        {in: nil, want: listRunsResponse{}},
		"unknown fields are skipped":   {in: withUnknown, want: listRunsResponse{Runs: []Run{runningRun, finishedRun}, Now: "now"}},
		"repeated key and status":      {in: repeated, want: listRunsResponse{Runs: []Run{{ID: 3, FabID: "new", Status: "finished", SubStatus: "failed"}}}},
		"run without run_id takes key": {in: keyOnly, want: listRunsResponse{Runs: []Run{{ID: 8, FabID: "a/b"}}}},
		"truncated": {
			in:      handBuilt[:len(handBuilt)-3],
			wantErr: "ListRunsResponse field 2: unexpected EOF",
		},
		"truncated inside a run": {
			in:      appendMessage(nil, 1, appendMessage(nil, 2, []byte{0x08})),
			wantErr: "ListRunsResponse field 1: ListRunsResponse.run_dict entry field 2: Run field 1: unexpected EOF",
		},
		"field number 0": {in: []byte{0x00, 0x01}, wantErr: "ListRunsResponse: proto: invalid field number"},
		"stray end group": {
			in:      protowire.AppendTag(nil, 7, protowire.EndGroupType),
			wantErr: "ListRunsResponse field 7: proto: mismatching end group marker",
		},
		"invalid UTF-8 in a run's status": {
			in: appendMessage(nil, 1, appendMessage(nil, 2,
				appendMessage(nil, 10, appendString(nil, 1, "\xff")))),
			wantErr: "Run field 10: RunStatus field 1: string is not valid UTF-8",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := decodeListRunsResponse(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(errText(err), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeStreamLogsResponse(t *testing.T) {
	tests := map[string]struct {
		in      []byte
		want    logChunk
		wantErr string
	}{
		"python golden": {
			in:   mustHex(t, pythonLogChunk),
			want: logChunk{Output: "[ROUND 1/1]\nFLOTILLA_PROGRESS {}\n", Latest: 1754300001.5},
		},
		"empty":                 {in: nil, want: logChunk{}},
		"unknown field skipped": {in: appendUint(encodeStreamLogsResponse(logChunk{Output: "x"}), 3, 9), want: logChunk{Output: "x"}},
		"truncated double":      {in: mustHex(t, pythonLogChunk)[:40], wantErr: "StreamLogsResponse field 2: unexpected EOF"},
		"invalid UTF-8":         {in: appendString(nil, 1, "a\xc3"), wantErr: "string is not valid UTF-8"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := decodeStreamLogsResponse(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(errText(err), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadLogStream(t *testing.T) {
	one := frame(encodeStreamLogsResponse(logChunk{Output: "a\n", Latest: 10}))
	two := frame(encodeStreamLogsResponse(logChunk{Output: "bc\n", Latest: 11}))
	long := frame(encodeStreamLogsResponse(logChunk{Output: strings.Repeat("x", 30), Latest: 12}))
	older := frame(encodeStreamLogsResponse(logChunk{Output: "d\n", Latest: 4}))
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := map[string]struct {
		in      []byte
		after   float64
		limit   int
		oneByte bool // deliver the stream one byte per Read
		want    Log
		wantErr string
	}{
		"empty stream is complete": {after: 3, want: Log{Latest: 3, Complete: true}},
		"two frames":               {in: cat(one, two), want: Log{Text: "a\nbc\n", Latest: 11, Complete: true}},
		"one byte per read":        {in: cat(one, two), oneByte: true, want: Log{Text: "a\nbc\n", Latest: 11, Complete: true}},
		"latest never goes back":   {in: cat(two, older), after: 1, want: Log{Text: "bc\nd\n", Latest: 11, Complete: true}},
		"empty frame":              {in: cat(frame(nil), one), want: Log{Text: "a\n", Latest: 10, Complete: true}},
		"text limit stops before the frame that would pass it": {
			in: cat(long, long), limit: 50, want: Log{Text: strings.Repeat("x", 30), Latest: 12},
		},
		"cut inside a header": {in: cat(one, two[:2]), want: Log{Text: "a\n", Latest: 10}, wantErr: "the stream ended inside a frame"},
		"cut inside a frame":  {in: cat(one, two[:6]), want: Log{Text: "a\n", Latest: 10}, wantErr: "the stream ended inside a frame"},
		"frame over the limit": {
			in: cat(one, []byte{0x7f, 0xff, 0xff, 0xff}), want: Log{Text: "a\n", Latest: 10},
			wantErr: "a log frame of 2147483647 bytes exceeds the limit of 67108864",
		},
		"malformed message": {
			in: cat(one, frame([]byte{0x0a, 0x05})), want: Log{Text: "a\n", Latest: 10},
			wantErr: "StreamLogsResponse field 1: unexpected EOF",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if tc.limit == 0 {
				tc.limit = DefaultMaxMessageBytes
			}
			var r = bytes.NewReader(tc.in)
			got, err := readLogStream(r, tc.after, tc.limit)
			if tc.oneByte {
				got, err = readLogStream(iotest.OneByteReader(bytes.NewReader(tc.in)), tc.after, tc.limit)
			}
			if tc.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(errText(err), tc.wantErr)) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadLogStreamPassesReadErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := readLogStream(iotest.ErrReader(boom), 0, DefaultMaxMessageBytes)
	if !errors.Is(err, boom) {
		t.Fatalf("error = %v, want %v", err, boom)
	}
}

// errText is err's message with the non-breaking space protobuf-go randomly puts after "proto:"
// (to discourage matching its messages) made a plain space.
func errText(err error) string {
	return strings.ReplaceAll(err.Error(), "\u00a0", " ")
}

// A run's string run-config values are read (the hub binds a federation to its run by one);
// values of other types are left out.
func TestDecodeOverrideConfig(t *testing.T) {
	// Python's ListRunsResponse with run 7 and override_config {"flotilla-federation":
	// Scalar(string="uid-a"), "num-server-rounds": Scalar(sint64=3)}.
	const hexResp = "0a5a080712560807221e0a13666c6f74696c6c612d66656465726174696f6e120772057569642d6122170a116e756d2d7365727665722d726f756e6473120240063219323032362d30382d30345431303a30303a30302b30303a30301219323032362d30382d30345431303a30303a30312b30303a3030"
	got, err := decodeListRunsResponse(mustHex(t, hexResp))
	if err != nil {
		t.Fatal(err)
	}
	want := []Run{{ID: 7, PendingAt: "2026-08-04T10:00:00+00:00", OverrideConfig: map[string]string{"flotilla-federation": "uid-a"}}}
	if diff := cmp.Diff(want, got.Runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}

// Golden node messages from flwr 1.42's control_pb2 and node_pb2, SerializeToString
// (deterministic=True). The keys are P-256 keys as Flower's public_key_to_bytes writes them.
const (
	bigNodeID  = 13835058055282163729 // above the int64 range: node IDs are uint64
	pythonKeyA = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEnO4BJuGMEEP1eKchOVwaKRe3wtUE\n" +
		"1XKKU6H3uWhTa0TNF6wSNE+tdSwdSoBdIYZy0TCu82ekL7trjZgO6mpT+Q==\n-----END PUBLIC KEY-----\n"
	pythonKeyB = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAETVPJLkNqwxTiWAXDm4CMnO90uSA9\n" +
		"PPzVF70/PNzq4+YrUD9vYM0lc19hV/tzsWmgMabQLAkjMu7J5tFrwnY1Iw==\n-----END PUBLIC KEY-----\n"
	// pythonRegisterNodeNamed is RegisterNodeRequest(public_key=pythonKeyA, name="cluster-a").
	pythonRegisterNodeNamed = "0ab2012d2d2d2d2d424547494e205055424c4943204b45592d2d2d2d2d0a4d466b77457759484b6f5a497a6a3043415159494b6f5a497a6a304441516344516741456e4f34424a75474d45455031654b63684f5677614b526533777455450a31584b4b55364833755768546130544e463677534e452b7464537764536f426449595a79305443753832656b4c3774726a5a674f366d70542b513d3d0a2d2d2d2d2d454e44205055424c4943204b45592d2d2d2d2d0a1a09636c75737465722d61"
	// pythonRegisterNode is RegisterNodeRequest(public_key=pythonKeyA): name unset.
	pythonRegisterNode = "0ab2012d2d2d2d2d424547494e205055424c4943204b45592d2d2d2d2d0a4d466b77457759484b6f5a497a6a3043415159494b6f5a497a6a304441516344516741456e4f34424a75474d45455031654b63684f5677614b526533777455450a31584b4b55364833755768546130544e463677534e452b7464537764536f426449595a79305443753832656b4c3774726a5a674f366d70542b513d3d0a2d2d2d2d2d454e44205055424c4943204b45592d2d2d2d2d0a"
	// pythonNodeID is both RegisterNodeResponse(node_id=bigNodeID) and
	// UnregisterNodeRequest(node_id=bigNodeID): node_id is field 1 of each.
	pythonNodeID = "089180808080808080c001"
	// pythonListNodes is ListNodesResponse(now="2026-08-04T10:01:00+00:00") with two NodeInfo:
	// bigNodeID (online, every field set: owner, timestamps, online_until, heartbeat 30, key A,
	// location "37.4056,-122.0775", name "cluster-a") and 7 (unregistered, key B, no name).
	pythonListNodes = "0ac202089180808080808080c001120a7379735f6e6f617574681a063c6e6f6e653e22066f6e6c696e652a19323032362d30382d30345431303a30303a30302b30303a30303219323032362d30382d30345431303a30303a30352b30303a303049000060292124da41510000000000003e405ab2012d2d2d2d2d424547494e205055424c4943204b45592d2d2d2d2d0a4d466b77457759484b6f5a497a6a3043415159494b6f5a497a6a304441516344516741456e4f34424a75474d45455031654b63684f5677614b526533777455450a31584b4b55364833755768546130544e463677534e452b7464537764536f426449595a79305443753832656b4c3774726a5a674f366d70542b513d3d0a2d2d2d2d2d454e44205055424c4943204b45592d2d2d2d2d0a621133372e343035362c2d3132322e303737356a09636c75737465722d610a98020807120a7379735f6e6f617574681a063c6e6f6e653e220c756e726567697374657265642a19323032362d30382d30345430393a30303a30302b30303a30304219323032362d30382d30345430393a33303a30302b30303a3030510000000000003e405ab2012d2d2d2d2d424547494e205055424c4943204b45592d2d2d2d2d0a4d466b77457759484b6f5a497a6a3043415159494b6f5a497a6a304441516344516741455456504a4c6b4e7177785469574158446d34434d6e4f3930755341390a50507a564637302f504e7a71342b597255443976594d306c63313968562f747a73576d674d6162514c416b6a4d75374a35744672776e593149773d3d0a2d2d2d2d2d454e44205055424c4943204b45592d2d2d2d2d0a1219323032362d30382d30345431303a30313a30302b30303a3030"
)

var (
	onlineNode       = Node{ID: bigNodeID, PublicKeyPEM: []byte(pythonKeyA), Status: "online", Name: "cluster-a"}
	unregisteredNode = Node{ID: 7, PublicKeyPEM: []byte(pythonKeyB), Status: "unregistered"}
)

func TestAppendNodeRequests(t *testing.T) {
	tests := map[string]struct {
		got     []byte
		wantHex string
	}{
		"register with a name":         {got: appendRegisterNodeRequest(nil, []byte(pythonKeyA), "cluster-a"), wantHex: pythonRegisterNodeNamed},
		"register without a name":      {got: appendRegisterNodeRequest(nil, []byte(pythonKeyA), ""), wantHex: pythonRegisterNode},
		"unregister":                   {got: appendUnregisterNodeRequest(nil, bigNodeID), wantHex: pythonNodeID},
		"unregister node 0 sends none": {got: appendUnregisterNodeRequest(nil, 0), wantHex: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantHex, hex.EncodeToString(tc.got)); diff != "" {
				t.Errorf("encoding (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeRegisterNodeResponse(t *testing.T) {
	tests := map[string]struct {
		in      []byte
		want    uint64
		wantErr string
	}{
		"python golden":             {in: mustHex(t, pythonNodeID), want: bigNodeID},
		"explicit zero":             {in: mustHex(t, "0800"), want: 0},
		"empty":                     {in: nil, want: 0},
		"unknown field skipped":     {in: appendString(mustHex(t, pythonNodeID), 2, "x"), want: bigNodeID},
		"node_id of the wrong type": {in: appendString(nil, 1, "x"), want: 0},
		"truncated":                 {in: mustHex(t, pythonNodeID)[:5], wantErr: "RegisterNodeResponse field 1: unexpected EOF"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := decodeRegisterNodeResponse(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(errText(err), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("decodeRegisterNodeResponse = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestDecodeListNodesResponse(t *testing.T) {
	handBuilt := encodeListNodesResponse(listNodesResponse{Nodes: []Node{onlineNode, unregisteredNode}, Now: "now"})
	// A NodeInfo repeated field overwrites; a node with a status given twice keeps the last.
	twice := appendMessage(nil, 1, append(encodeNodeInfo(Node{ID: 3, Status: "online", Name: "a"}),
		appendString(nil, 4, "offline")...))
	tests := map[string]struct {
		in      []byte
		want    listNodesResponse
		wantErr string
	}{
		"python golden": {
			in:   mustHex(t, pythonListNodes),
			want: listNodesResponse{Nodes: []Node{onlineNode, unregisteredNode}, Now: "2026-08-04T10:01:00+00:00"},
		},
		"hand-built":                        {in: handBuilt, want: listNodesResponse{Nodes: []Node{onlineNode, unregisteredNode}, Now: "now"}},
		"empty":                             {in: nil, want: listNodesResponse{}},
		"repeated field, last wins":         {in: twice, want: listNodesResponse{Nodes: []Node{{ID: 3, Status: "offline", Name: "a"}}}},
		"unknown fields are skipped":        {in: appendUint(handBuilt, 99, 1), want: listNodesResponse{Nodes: []Node{onlineNode, unregisteredNode}, Now: "now"}},
		"the key as the SuperLink holds it": {in: appendMessage(nil, 1, appendMessage(nil, 11, []byte{0xff, 0})), want: listNodesResponse{Nodes: []Node{{PublicKeyPEM: []byte{0xff, 0}}}}},
		"truncated": {
			in:      handBuilt[:len(handBuilt)-2],
			wantErr: "ListNodesResponse field 2: unexpected EOF",
		},
		"truncated inside a node": {
			in:      appendMessage(nil, 1, []byte{0x08}),
			wantErr: "ListNodesResponse field 1: NodeInfo field 1: unexpected EOF",
		},
		"invalid UTF-8 in a status": {
			in:      appendMessage(nil, 1, appendString(nil, 4, "\xff")),
			wantErr: "NodeInfo field 4: string is not valid UTF-8",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := decodeListNodesResponse(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(errText(err), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}
