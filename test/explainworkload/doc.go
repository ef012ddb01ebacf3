// Package explainworkload tests `flotilla explain workload` against a real hub API server with
// Kueue's CRDs installed and no Kueue process: the test makes what Kueue and the resource-usage
// add-on would (the hub's queues as kueuesetup.Hub makes them, a MultiKueueConfig ranking three
// workers, their MultiKueueClusters, one inactive, the workers' ResourceUsages, and Workloads
// with the statuses Kueue gives them: one dispatching and two waiting for quota), runs the command
// with a kubeconfig of the hub and checks its table and its JSON.
package explainworkload
