// Package cli assembles the flotilla command from one package per verb. Commands take their
// input and output streams (and, where they read time, a clock) as arguments, so tests run them
// in-process and read what they print.
package cli
