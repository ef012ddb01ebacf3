// Package loop runs the agent's controllers as loops side by side (Runner), each doing one thing
// on its own schedule (Loop), so that a slow step of one (a certificate request waiting for
// approval, a spoke slow to list its nodes) cannot delay another (the lease).
//
// The registration agent's loops, the fence's and the add-on agent's all run on it. A loop's
// step says when the next round is due; a failed step is logged once, with what would fix it
// (Runner.Explain), and retried after an exponential backoff with jitter that starts over after
// a success. A loop can also be woken early by signals (Loop.Wake), such as the hub credentials
// changing: loops share what they learn through holders that every loop reads at each round
// (registration.HubAccess, registration.Shared) rather than by calling each other.
//
// It owns no client and no policy: the backoff bounds, the clock, the log and the explanation of
// failures are the Runner's caller's.
package loop
