package streams

import (
	"bytes"
	"io"
	"os"
)

// IO is a command's standard streams.
type IO struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// OS returns the process's standard streams.
func OS() IO { return IO{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr} }

// Buffers returns streams that write into buffers, for tests.
func Buffers() (io IO, out, errOut *bytes.Buffer) {
	out, errOut = &bytes.Buffer{}, &bytes.Buffer{}
	return IO{In: &bytes.Buffer{}, Out: out, ErrOut: errOut}, out, errOut
}
