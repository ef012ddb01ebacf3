package ociimage

import (
	"debug/elf"
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Platform is the OS and CPU architecture an image runs on, in Go's (and OCI's) names.
type Platform struct {
	OS           string
	Architecture string
}

func (p Platform) String() string { return p.OS + "/" + p.Architecture }

// v1 is p as an index descriptor's platform.
func (p Platform) v1() *v1.Platform { return &v1.Platform{OS: p.OS, Architecture: p.Architecture} }

// machines lists the platforms images are built for, with the ELF machine their binaries must have.
var machines = map[Platform]elf.Machine{
	{OS: "linux", Architecture: "amd64"}: elf.EM_X86_64,
	{OS: "linux", Architecture: "arm64"}: elf.EM_AARCH64,
}

// SupportedPlatforms lists the platforms ParsePlatform accepts, sorted.
func SupportedPlatforms() []string {
	var out []string
	for p := range machines {
		out = append(out, p.String())
	}
	slices.Sort(out)
	return out
}

// ParsePlatform reads "os/arch", such as "linux/arm64", and refuses a platform images are not built for.
func ParsePlatform(s string) (Platform, error) {
	osName, arch, ok := strings.Cut(s, "/")
	p := Platform{OS: osName, Architecture: arch}
	if _, known := machines[p]; !ok || !known {
		return Platform{}, fmt.Errorf("platform %q: not one images are built for; use one of %s",
			s, strings.Join(SupportedPlatforms(), ", "))
	}
	return p, nil
}
