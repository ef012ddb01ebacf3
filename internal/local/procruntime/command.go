package procruntime

import (
	"fmt"
	"path/filepath"
	"strings"
)

// command is the process's argv: the local executable for the container's image, then the rest
// of the container's command and its args, with $(VAR) expanded.
//
// The image's own entry point and default arguments are not known locally; the executable in
// Commands stands for the entry point. A container that sets command names a program inside
// the image as command[0]: the runtime accepts it when its base name is the executable's
// ("/flotilla" for bin/flotilla, "sh" for /bin/sh) and runs the executable in its place; any
// other command[0] is an error, as the image's other programs are not on this machine.
func (s *start) command(v *vars) ([]string, error) {
	exe, err := s.r.executable(s.c.Image)
	if err != nil {
		return nil, err
	}
	argv := []string{exe}
	if len(s.c.Command) > 0 {
		entry := expand(s.c.Command[0], v.lookup())
		if entry != exe && filepath.Base(entry) != filepath.Base(exe) {
			return nil, fmt.Errorf("command[0] %q is not the program the runtime runs for image %s (%s); the runtime replaces command[0] only when its base name is %q: drop command, or map the image to the program %q names", entry, s.c.Image, exe, filepath.Base(exe), entry)
		}
		for _, a := range s.c.Command[1:] {
			argv = append(argv, expand(a, v.lookup()))
		}
	}
	for _, a := range s.c.Args {
		argv = append(argv, expand(a, v.lookup()))
	}
	return argv, nil
}

// executable is the local program for image: Commands of the exact reference, else of its
// repository (the reference without tag and digest).
func (r *Runtime) executable(image string) (string, error) {
	if image == "" {
		return "", fmt.Errorf("image is empty; set the container's image to one of Runtime.Commands")
	}
	if exe, ok := r.Commands[image]; ok {
		return exe, nil
	}
	repo := Repository(image)
	if exe, ok := r.Commands[repo]; ok {
		return exe, nil
	}
	return "", fmt.Errorf("image %s has no local program; add %q (or %q) to the runtime's Commands, mapped to the executable that stands for the image", image, image, repo)
}

// Repository is an image reference without its digest and tag: "ghcr.io/x/flotilla:v1" and
// "ghcr.io/x/flotilla@sha256:..." are "ghcr.io/x/flotilla"; a registry's port stays.
func Repository(image string) string {
	if i := strings.IndexByte(image, '@'); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') {
		image = image[:i]
	}
	return image
}
