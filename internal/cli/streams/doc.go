// Package streams holds the input and output streams every command is given.
package streams
