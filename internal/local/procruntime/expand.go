package procruntime

import (
	"strings"
	"unicode/utf8"
)

// expand replaces $(VAR) references in s as the kubelet does in env values, command and args:
//
//   - $(VAR) becomes lookup(VAR) when VAR is defined, and stays $(VAR) when it is not;
//   - $$ becomes $, so $$(VAR) is the literal text $(VAR);
//   - a $ before anything else, an unclosed $( and a trailing $ stay as they are.
func expand(s string, lookup func(string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			i++
			continue
		}
		switch next := s[i+1]; next {
		case '$':
			b.WriteByte('$')
			i += 2
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString("$(")
				i += 2
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end + 1
		default:
			// A $ before any other character, which may be a multi-byte rune: both stay.
			_, size := utf8.DecodeRuneInString(s[i+1:])
			b.WriteString(s[i : i+1+size])
			i += 1 + size
		}
	}
	return b.String()
}

// lookupIn looks a name up in maps, the first that defines it winning.
func lookupIn(maps ...map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for _, m := range maps {
			if v, ok := m[name]; ok {
				return v, true
			}
		}
		return "", false
	}
}
