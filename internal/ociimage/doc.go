// Package ociimage builds Flotilla's container images from static flotilla binaries, without a
// container engine or a registry: one image per platform on an empty base, and an image index over
// them, each written as a tarball that the usual tools load.
//
// An image is one gzip layer holding /flotilla (the binary, 0755), /etc/passwd and /etc/group (root
// and the nonroot user and group 65532, as distroless images have) and an empty /tmp (1777), all
// owned by root, so nothing in the image is writable by the user it runs as except /tmp. The config
// runs /flotilla as 65532:65532; the subcommand picks the role (`flotilla hub`, `flotilla agent`).
// There is no shell and no CA bundle: the hub and the agents trust the CAs their kubeconfigs name;
// anything else (an HTTPS scorer signed by a public CA) needs a bundle mounted at
// /etc/ssl/certs/ca-certificates.crt or named by SSL_CERT_FILE.
//
// Two ideas a reader needs:
//
//   - Reproducible: every time in the output (the config's created, the label
//     org.opencontainers.image.created, the history, every tar header in the layer and in the
//     tarballs) is the Spec's Created, which the Makefile sets to the commit time, and gzip writes
//     no name or time; so the same binaries and Spec give the same digests and the same bytes.
//   - One tarball, every loader: a platform's tarball is an OCI image layout (oci-layout, index.json,
//     blobs/sha256/...) and also carries a docker-save manifest.json pointing at the same blobs.
//     Docker without the containerd store reads manifest.json (its RepoTags name the image);
//     containerd (ctr import, kind load image-archive, Docker with the containerd store) reads
//     index.json, whose io.containerd.image.name annotation holds the full reference and
//     org.opencontainers.image.ref.name the tag, as `docker save` writes them. The multi-arch
//     tarball is an OCI layout only; its index.json names one image index over the platforms.
package ociimage
