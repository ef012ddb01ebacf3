// Package netchaos cuts loopback TCP connections for tests, as a network partition would.
//
// A Relay listens on a port of 127.0.0.1 of its own and copies bytes both ways between each
// connection it accepts and a target address: a client given the relay's address instead of the
// server's reaches the same server (TLS stays end to end, so a certificate for 127.0.0.1 still
// verifies), but over a port that no other client uses.
//
// A Partition drops, while cut, every TCP packet that enters the loopback interface to or from
// its ports, with iptables rules in a chain of its own (ChainPrefix, the process id and a
// sequence number) jumped to from INPUT. Established connections hang and new ones time out, as
// in a real partition; packets are dropped on input only, so senders see no error, only
// silence. Heal removes the jump and the chain; no other rule or chain is touched. Cutting needs
// iptables and root (CAP_NET_ADMIN): Check says which is missing.
//
// Together they separate clients that share 127.0.0.1 and even a process: give one client a
// relay and cut the relay's port, and only that client loses the server.
package netchaos
