// Command flotilla is the Flotilla hub, agent and CLI; see `flotilla --help`.
package main
