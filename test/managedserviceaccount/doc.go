// Package managedserviceaccount tests OCM's ManagedServiceAccount API against a real hub and
// spoke: the hub's token Secret and the agent's Role for it, the built-in add-on's ServiceAccount
// and token (which authenticates on the spoke as that ServiceAccount and carries no rights until
// someone grants them), a new token when the ServiceAccount is made again, ServiceAccounts and
// Secrets of the same names that someone else made left alone, what the agent's hub identity may
// not do, deletion and ttlSecondsAfterCreation.
package managedserviceaccount
