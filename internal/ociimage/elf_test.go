package ociimage

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// fakeELF is a minimal 64-bit little-endian ELF executable for machine: a header, a PT_LOAD
// program header and, when interp is set, a PT_INTERP naming it (as a cgo build has), then payload.
// debug/elf reads it as the real thing; it never runs.
func fakeELF(t *testing.T, machine elf.Machine, interp, payload string) []byte {
	t.Helper()
	const ehsize, phentsize = 64, 56
	progs := []elf.Prog64{{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Align: 0x1000}}
	if interp != "" {
		progs = append(progs, elf.Prog64{Type: uint32(elf.PT_INTERP), Flags: uint32(elf.PF_R), Align: 1})
	}
	dataOff := uint64(ehsize + phentsize*len(progs))
	body := []byte(payload)
	if interp != "" {
		progs[1].Off = dataOff
		progs[1].Filesz = uint64(len(interp) + 1)
		progs[1].Memsz = progs[1].Filesz
		body = append(append([]byte(interp), 0), body...)
	}
	progs[0].Filesz = dataOff + uint64(len(body))
	progs[0].Memsz = progs[0].Filesz

	hdr := elf.Header64{
		Type:      uint16(elf.ET_EXEC),
		Machine:   uint16(machine),
		Version:   uint32(elf.EV_CURRENT),
		Entry:     0x400000,
		Phoff:     ehsize,
		Ehsize:    ehsize,
		Phentsize: phentsize,
		Phnum:     uint16(len(progs)),
	}
	copy(hdr.Ident[:], elf.ELFMAG)
	hdr.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	hdr.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	hdr.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)

	var b bytes.Buffer
	for _, v := range []any{hdr, progs} {
		if err := binary.Write(&b, binary.LittleEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	b.Write(body)
	return b.Bytes()
}

// writeTestFile writes b to name under dir, executable, and returns its path.
func writeTestFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFakeELFReadsBack(t *testing.T) {
	f, err := elf.NewFile(bytes.NewReader(fakeELF(t, elf.EM_AARCH64, "/lib/ld-linux-aarch64.so.1", "payload")))
	if err != nil {
		t.Fatalf("debug/elf refuses the fake: %v", err)
	}
	var types []elf.ProgType
	for _, p := range f.Progs {
		types = append(types, p.Type)
	}
	if f.Machine != elf.EM_AARCH64 || len(types) != 2 || types[1] != elf.PT_INTERP {
		t.Fatalf("fake reads back as %s with program headers %v", f.Machine, types)
	}
	if got := interpreter(f.Progs[1]); got != "/lib/ld-linux-aarch64.so.1" {
		t.Errorf("interpreter = %q", got)
	}
}
