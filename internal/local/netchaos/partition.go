package netchaos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// ChainPrefix begins the name of every iptables chain a Partition makes:
// FLOTILLA-CHAOS-<pid>-<n>, at most 28 characters as iptables allows.
const ChainPrefix = "FLOTILLA-CHAOS-"

// chainSeq numbers the partitions of this process.
var chainSeq atomic.Uint32

// Check says whether this machine can cut ports: iptables must be installed and usable, which
// needs root (CAP_NET_ADMIN). Its error says what to install or how to run.
//
// A process that is not root uses `sudo -n iptables` when sudo needs no password (a CI user with
// sudo rights); otherwise it must run as root.
func Check() error {
	if !viaSudo() {
		if _, err := exec.LookPath("iptables"); err != nil {
			return errors.New("netchaos: iptables is not installed; network partitions need it (Debian: apt-get install iptables)")
		}
	}
	if out, err := iptablesCmd("-S", "INPUT").CombinedOutput(); err != nil {
		return fmt.Errorf("netchaos: iptables -S INPUT failed (%v: %s); network partitions change iptables rules, which needs root (CAP_NET_ADMIN): install iptables and run the test as root, or as a user with passwordless sudo",
			err, strings.TrimSpace(string(out)))
	}
	return nil
}

// viaSudo says whether iptables runs through `sudo -n`: this process is not root and sudo asks
// it for no password.
var viaSudo = sync.OnceValue(func() bool {
	return os.Geteuid() != 0 && exec.Command("sudo", "-n", "true").Run() == nil
})

// iptablesCmd is iptables with args, waiting for the lock other iptables commands hold.
func iptablesCmd(args ...string) *exec.Cmd {
	args = append([]string{"-w"}, args...)
	if viaSudo() {
		return exec.Command("sudo", append([]string{"-n", "iptables"}, args...)...)
	}
	return exec.Command("iptables", args...)
}

// Partition drops every TCP packet entering the loopback interface to or from its ports while
// it is cut.
type Partition struct {
	chain string
	ports []int
	// run runs iptables with args.
	run func(args ...string) error

	mu  sync.Mutex
	cut bool
}

// NewPartition returns a partition of ports, not yet cut. It fails, saying why, if this machine
// cannot cut (Check).
func NewPartition(ports ...int) (*Partition, error) {
	if len(ports) == 0 {
		return nil, errors.New("netchaos: a partition needs at least one port")
	}
	for _, p := range ports {
		if p < 1 || p > 65535 {
			return nil, fmt.Errorf("netchaos: port %d is not a TCP port (1-65535)", p)
		}
	}
	if err := Check(); err != nil {
		return nil, err
	}
	return &Partition{chain: chainName(os.Getpid(), chainSeq.Add(1)), ports: append([]int(nil), ports...), run: iptables}, nil
}

// Chain is the name of the partition's iptables chain, which exists only while it is cut.
func (p *Partition) Chain() string { return p.chain }

// Cut drops the ports' packets from now on: established connections hang and new ones cannot
// be made. Cutting a cut partition does nothing.
func (p *Partition) Cut() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return nil
	}
	for _, args := range cutCommands(p.chain, p.ports) {
		if err := p.run(args...); err != nil {
			// Undo what was added; commands for what was not fail, and are ignored.
			for _, undo := range healCommands(p.chain) {
				_ = p.run(undo...)
			}
			return err
		}
	}
	p.cut = true
	return nil
}

// Heal removes the jump and the chain Cut added: the ports' connections resume (TCP sends again
// what was dropped) and new ones can be made. Healing a partition that is not cut does nothing.
func (p *Partition) Heal() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.cut {
		return nil
	}
	var errs []error
	for _, args := range healCommands(p.chain) {
		errs = append(errs, p.run(args...))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	p.cut = false
	return nil
}

func chainName(pid int, seq uint32) string {
	return ChainPrefix + strconv.Itoa(pid) + "-" + strconv.FormatUint(uint64(seq), 10)
}

// jump is the INPUT rule that sends loopback TCP packets to chain.
func jump(chain string) []string { return []string{"INPUT", "-i", "lo", "-p", "tcp", "-j", chain} }

// cutCommands make chain, with a DROP rule per port and direction, and jump to it from INPUT.
func cutCommands(chain string, ports []int) [][]string {
	cmds := [][]string{{"-N", chain}}
	for _, port := range ports {
		for _, dir := range []string{"--dport", "--sport"} {
			cmds = append(cmds, []string{"-A", chain, "-i", "lo", "-p", "tcp", dir, strconv.Itoa(port), "-j", "DROP"})
		}
	}
	return append(cmds, append([]string{"-I"}, jump(chain)...))
}

// healCommands remove what cutCommands added: the jump, the chain's rules, the chain.
func healCommands(chain string) [][]string {
	return [][]string{append([]string{"-D"}, jump(chain)...), {"-F", chain}, {"-X", chain}}
}

// iptables runs iptables (iptablesCmd).
func iptables(args ...string) error {
	out, err := iptablesCmd(args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("netchaos: iptables %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
