package shell

import "strings"

// sedReadOnly allows sed that prints to stdout: no -i, no script file, and
// a script without the w/W/e commands or the w/e flags of s (checked by
// sedScriptSafe). --sandbox makes GNU sed refuse those itself.
func sedReadOnly(args []word) string {
	spec := optSpec{shortArg: "efl", shortOpt: "i", longArg: []string{"--expression", "--file", "--line-length"}}
	var scripts []word
	why := ""
	sandbox := false
	operands, _ := spec.scan(args, func(name string, val word) {
		switch name {
		case "-e", "--expression":
			scripts = append(scripts, val)
		case "-n", "-E", "-r", "-s", "-u", "-z", "-l", "-b", "--quiet", "--silent",
			"--regexp-extended", "--separate", "--unbuffered", "--null-data",
			"--zero-terminated", "--posix", "--debug", "--line-length", "--follow-symlinks",
			"--binary":
		case "--sandbox":
			sandbox = true
		case "-i":
			why = "sed -i edits files in place"
		case "-f", "--file":
			why = "sed -f runs a script file that is not checked"
		default:
			if longPrefix(name, "--in-place", 4) {
				why = "sed --in-place edits files in place"
			} else if why == "" {
				why = "sed " + name + " is not a known sed option"
			}
		}
	})
	if why != "" {
		return why
	}
	if len(scripts) == 0 {
		if len(operands) == 0 {
			return "sed without a script"
		}
		scripts = operands[:1]
	}
	for _, s := range scripts {
		if s.dyn {
			return "sed script is not a literal"
		}
		if !sandbox && !sedScriptSafe(s.lit) {
			return "sed script may write files or run commands"
		}
	}
	return ""
}

// sedScriptSafe parses a sed script far enough to find every command and
// s flag; anything it does not recognize makes the script unsafe.
func sedScriptSafe(s string) bool {
	i := 0
	skip := func(set string) {
		for i < len(s) && strings.IndexByte(set, s[i]) >= 0 {
			i++
		}
	}
	toEOL := func() {
		for i < len(s) && s[i] != '\n' {
			if s[i] == '\\' {
				i++
			}
			i++
		}
	}
	// delimited skips to just past the next unescaped delim.
	delimited := func(delim byte) bool {
		for i < len(s) {
			c := s[i]
			i++
			switch c {
			case '\\':
				i++
			case delim:
				return true
			}
		}
		return false
	}
	address := func() bool {
		switch {
		case i < len(s) && s[i] >= '0' && s[i] <= '9':
			skip("0123456789")
			if i < len(s) && s[i] == '~' {
				i++
				skip("0123456789")
			}
		case i < len(s) && s[i] == '$':
			i++
		case i < len(s) && s[i] == '/':
			i++
			if !delimited('/') {
				return false
			}
			skip("IM")
		case i+1 < len(s) && s[i] == '\\':
			d := s[i+1]
			i += 2
			if !delimited(d) {
				return false
			}
			skip("IM")
		}
		return true
	}
	for {
		skip(" \t\n;")
		if i >= len(s) {
			return true
		}
		if !address() {
			return false
		}
		skip(" \t")
		if i < len(s) && s[i] == ',' {
			i++
			skip(" \t")
			if i < len(s) && (s[i] == '+' || s[i] == '~') {
				i++
				skip("0123456789")
			} else if !address() {
				return false
			}
		}
		skip(" \t")
		if i < len(s) && s[i] == '!' {
			i++
			skip(" \t")
		}
		if i >= len(s) {
			return false
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'q', 'Q', 'L':
			skip(" \t0123456789")
		case 'b', 't', 'T', ':', 'v':
			for i < len(s) && s[i] != ';' && s[i] != '\n' {
				i++
			}
		case 'a', 'i', 'c', 'r', 'R', '#':
			// Text, a file to read, or a comment: to the end of the line.
			toEOL()
		case 'y':
			if i >= len(s) {
				return false
			}
			d := s[i]
			i++
			if !delimited(d) || !delimited(d) {
				return false
			}
		case 's':
			if i >= len(s) || s[i] == '\\' || s[i] == '\n' {
				return false
			}
			d := s[i]
			i++
			if !delimited(d) || !delimited(d) {
				return false
			}
			for i < len(s) && strings.IndexByte("gpiImM0123456789", s[i]) >= 0 {
				i++
			}
			// Anything else, w and e included, ends the safe part.
			if i < len(s) && strings.IndexByte(" \t\n;}", s[i]) < 0 {
				return false
			}
		default:
			// w, W, e and anything unknown.
			return false
		}
	}
}

// awkReadOnly allows awk whose program is literal and has no system(),
// no redirection or pipe (> and | also catch comparisons: erring safe),
// and no @load; gawk's --sandbox allows any program.
func awkReadOnly(base string, args []word) string {
	spec := optSpec{shortArg: "Fvfeil", longArg: []string{"--field-separator", "--assign", "--file",
		"--source", "--include", "--load"}}
	var programs []word
	why := ""
	sandbox := false
	operands, _ := spec.scan(args, func(name string, val word) {
		switch name {
		case "-F", "-v", "--field-separator", "--assign", "-b", "-c", "-P", "-r", "-n", "-t",
			"-M", "-N", "--characters-as-bytes", "--traditional", "--posix", "--re-interval",
			"--non-decimal-data", "--lint", "--bignum", "--use-lc-numeric":
		case "-e", "--source":
			programs = append(programs, val)
		case "-S", "--sandbox":
			sandbox = true
		default:
			if why == "" {
				why = base + " " + name + " loads code or is not a known option"
			}
		}
	})
	if why != "" {
		return why
	}
	if programs == nil {
		if len(operands) == 0 {
			return base + " without a program"
		}
		programs = operands[:1]
	}
	for _, p := range programs {
		switch {
		case p.dyn:
			return base + " program is not a literal"
		case sandbox:
		case strings.Contains(p.lit, "system"), strings.ContainsAny(p.lit, ">|"),
			strings.Contains(p.lit, "@load"):
			return base + " program may write files or run commands"
		}
	}
	return ""
}
