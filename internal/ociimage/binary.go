package ociimage

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"strings"
)

// checkBinary opens path and refuses it unless it is a statically linked ELF executable for p: an
// image on an empty base has no dynamic loader and no libc, so a binary asking for one (a PT_INTERP
// program header, which cgo builds have) would fail to start with a baffling "no such file or
// directory". It returns the file's size.
func checkBinary(path string, p Platform) (int64, error) {
	buildHint := fmt.Sprintf("build it with CGO_ENABLED=0 GOOS=%s GOARCH=%s go build ./cmd/flotilla", p.OS, p.Architecture)
	f, err := elf.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return 0, fmt.Errorf("binary for %s: %s does not exist; %s (make image does)", p, path, buildHint)
		}
		return 0, fmt.Errorf("binary for %s: %s is not an ELF executable (%v); %s", p, path, err, buildHint)
	}
	defer func() { _ = f.Close() }()

	if want := machines[p]; f.Machine != want || f.Class != elf.ELFCLASS64 {
		return 0, fmt.Errorf("binary for %s: %s is a %s %s executable, not %s; %s",
			p, path, f.Class, f.Machine, want, buildHint)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return 0, fmt.Errorf("binary for %s: %s is an ELF %s, not an executable; %s", p, path, f.Type, buildHint)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return 0, fmt.Errorf("binary for %s: %s is dynamically linked (it asks for the loader %s), "+
				"which an image on an empty base does not have; build it statically with CGO_ENABLED=0",
				p, path, interpreter(prog))
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("binary for %s: %w", p, err)
	}
	return info.Size(), nil
}

// interpreter is the loader a PT_INTERP header names, for the error message.
func interpreter(prog *elf.Prog) string {
	b, err := io.ReadAll(io.LimitReader(prog.Open(), 4096))
	if err != nil || len(b) == 0 {
		return "named in PT_INTERP"
	}
	return strings.TrimRight(string(b), "\x00")
}
