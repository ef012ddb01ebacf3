// Package realnodes tests Flotilla in containers on real nodes: a local fleet with one real node
// per cluster (kubelet, containerd, a pod network; internal/local/realnode), Flotilla's image built
// from this module and imported into every node, the hub installed by `flotilla init --install`
// and an agent by `flotilla join --install`, exactly as docs/install.md tells a user.
package realnodes
