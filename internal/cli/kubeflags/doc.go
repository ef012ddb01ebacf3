// Package kubeflags finds the kubeconfig of every flotilla command that talks to a cluster, as
// kubectl and clusteradm do: --kubeconfig if given, else the files listed in $KUBECONFIG, merged,
// else ~/.kube/config, else the in-cluster configuration of a pod; --context picks a context.
// It is client-go's clientcmd loading, with errors that name what was tried and the fix.
package kubeflags
