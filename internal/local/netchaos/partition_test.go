package netchaos

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChainName(t *testing.T) {
	for _, tc := range []struct {
		pid  int
		seq  uint32
		want string
	}{
		{pid: 1, seq: 1, want: "FLOTILLA-CHAOS-1-1"},
		// The largest pid Linux gives and a large sequence still fit iptables' 28 characters.
		{pid: 4194304, seq: 99999, want: "FLOTILLA-CHAOS-4194304-99999"},
	} {
		got := chainName(tc.pid, tc.seq)
		if got != tc.want {
			t.Errorf("chainName(%d, %d) = %q, want %q", tc.pid, tc.seq, got, tc.want)
		}
		if len(got) > 28 {
			t.Errorf("chainName(%d, %d) = %q is longer than iptables' 28 characters", tc.pid, tc.seq, got)
		}
	}
}

func TestCutAndHealCommands(t *testing.T) {
	var ran []string
	p := &Partition{chain: "C", ports: []int{80, 443}, run: func(args ...string) error {
		ran = append(ran, strings.Join(args, " "))
		return nil
	}}
	// Healing before cutting, and cutting twice, run nothing.
	mustNil(t, p.Heal())
	mustNil(t, p.Cut())
	mustNil(t, p.Cut())
	mustNil(t, p.Heal())
	mustNil(t, p.Heal())
	want := []string{
		"-N C",
		"-A C -i lo -p tcp --dport 80 -j DROP",
		"-A C -i lo -p tcp --sport 80 -j DROP",
		"-A C -i lo -p tcp --dport 443 -j DROP",
		"-A C -i lo -p tcp --sport 443 -j DROP",
		"-I INPUT -i lo -p tcp -j C",
		"-D INPUT -i lo -p tcp -j C",
		"-F C",
		"-X C",
	}
	if diff := cmp.Diff(want, ran); diff != "" {
		t.Errorf("iptables commands (-want +got):\n%s", diff)
	}
}

func TestFailedCutUndoes(t *testing.T) {
	var ran []string
	p := &Partition{chain: "C", ports: []int{80}, run: func(args ...string) error {
		ran = append(ran, strings.Join(args, " "))
		if args[0] == "-I" {
			return errors.New("no")
		}
		return nil
	}}
	if err := p.Cut(); err == nil {
		t.Fatal("Cut succeeded although iptables failed")
	}
	want := []string{
		"-N C",
		"-A C -i lo -p tcp --dport 80 -j DROP",
		"-A C -i lo -p tcp --sport 80 -j DROP",
		"-I INPUT -i lo -p tcp -j C",
		"-D INPUT -i lo -p tcp -j C",
		"-F C",
		"-X C",
	}
	if diff := cmp.Diff(want, ran); diff != "" {
		t.Errorf("iptables commands (-want +got):\n%s", diff)
	}
	// The partition is not cut: Heal runs nothing.
	ran = nil
	mustNil(t, p.Heal())
	if len(ran) != 0 {
		t.Errorf("Heal after a failed Cut ran %q", ran)
	}
}

func TestNewPartitionRefusesBadPorts(t *testing.T) {
	for _, ports := range [][]int{nil, {0}, {65536}} {
		if _, err := NewPartition(ports...); err == nil {
			t.Errorf("NewPartition(%v) succeeded", ports)
		}
	}
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
