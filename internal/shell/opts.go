package shell

import (
	"slices"
	"strings"
)

// optSpec says which options of a program take a value.
type optSpec struct {
	shortArg string   // short options taking a value, attached or the next word
	shortOpt string   // short options whose value can only be attached (-i.bak)
	longArg  []string // long options taking the next word when written without '='
}

// eachOpt walks the leading options of args, as for programs that stop at
// their first operand (sudo, xargs, env, timeout), and returns the index
// of that operand. fn, if set, sees every option ("-c" for each letter of a
// cluster, "--name" for long ones) with its value. ok is false when an
// option word is not literal, so the options cannot be followed.
func eachOpt(args []word, shortArg, shortOpt string, longArg []string, fn func(name string, val word)) (int, bool) {
	spec := optSpec{shortArg, shortOpt, longArg}
	i := 0
	for i < len(args) {
		a := args[i]
		if uncertainFlag(a) {
			return i, false
		}
		if a.lit == "--" {
			return i + 1, true
		}
		if !isOpt(a) {
			return i, true
		}
		i = spec.one(args, i, fn)
	}
	return i, true
}

// scanOpts walks all of args the way GNU getopt and git do, with options
// allowed after operands, up to "--". It returns the operands. ok is false
// when some word might expand to an option.
func (spec optSpec) scan(args []word, fn func(name string, val word)) (operands []word, ok bool) {
	ok = true
	for i := 0; i < len(args); {
		a := args[i]
		switch {
		case uncertainFlag(a):
			ok = false
			i++
		case a.lit == "--" && !a.dyn:
			return append(operands, args[i+1:]...), ok
		case isOpt(a):
			i = spec.one(args, i, fn)
		default:
			operands = append(operands, a)
			i++
		}
	}
	return operands, ok
}

// one parses the option word args[i] and returns the index after it and
// its value.
func (spec optSpec) one(args []word, i int, fn func(name string, val word)) int {
	call := func(name string, val word) {
		if fn != nil {
			fn(name, val)
		}
	}
	l := args[i].lit
	i++
	if strings.HasPrefix(l, "--") {
		name, val, hasVal := strings.Cut(l, "=")
		switch {
		case hasVal:
			call(name, word{lit: val})
		case slices.Contains(spec.longArg, name) && i < len(args):
			call(name, args[i])
			i++
		default:
			call(name, word{})
		}
		return i
	}
	for j := 1; j < len(l); j++ {
		name := "-" + l[j:j+1]
		switch {
		case strings.IndexByte(spec.shortArg, l[j]) >= 0 && j+1 < len(l),
			strings.IndexByte(spec.shortOpt, l[j]) >= 0:
			call(name, word{lit: l[j+1:]})
			return i
		case strings.IndexByte(spec.shortArg, l[j]) >= 0:
			if i < len(args) {
				call(name, args[i])
				i++
			}
			return i
		}
		call(name, word{})
	}
	return i
}

// isOpt: a literal option word ("-" alone is an operand: stdin).
func isOpt(a word) bool { return !a.dyn && len(a.lit) > 1 && a.lit[0] == '-' }

// uncertainFlag: the word may turn into one or more options at run time.
func uncertainFlag(a word) bool {
	return a.mayFlag || (a.dyn && strings.HasPrefix(a.lit, "-"))
}

// longPrefix reports whether a long option name is name or a GNU-style
// abbreviation of it (at least minLen characters, "--" included).
func longPrefix(opt, name string, minLen int) bool {
	return len(opt) >= minLen && strings.HasPrefix(name, opt)
}
