// Package devfleet runs a local fleet that outlives the command that started it: `flotilla dev
// up` starts it, `status` reports on it, `down` stops it. The fleet's processes are detached;
// everything needed to find them again (pids, binaries, kubeconfigs, logs) is in a state file,
// fleet.json, in the state folder. Nothing else is remembered between commands.
//
// Besides up.lock while it runs, up writes two things in the state folder, which may hold other
// files: fleet.json and the fleet's folder, fleet/, marked as its own. down removes those two, and
// the state folder only if nothing else is left. Binaries are recorded as /proc/PID/exe shows
// them (absolute, links resolved), so that later commands recognize the processes from any folder.
//
// A state folder holds at most one fleet. up refuses to start a second one while any process of
// the first still runs, and clears the state of a fleet whose processes are all gone.
//
// With Kueue (the fleet file's `with: [kueue]` or `up --with kueue`), up also runs Kueue's manager
// on the hub and every spoke (localk8s.StartKueue), recorded in fleet.json like the other processes.
package devfleet
