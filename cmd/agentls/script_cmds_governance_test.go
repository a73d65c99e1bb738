package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// governanceScriptCmds are the commands the governance scripts need:
// the numbers a tool list states, so a golden file can say that every
// number a description or schema gives is one the code enforces.
func governanceScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"statednumbers": cmdStatedNumbers,
	}
}

var statedNumberRe = regexp.MustCompile(`\b(\d[\d,]*\d|\d)\b`)

// statednumbers [@FILE]: reads a tool list (`agentls tools` JSON) from
// FILE, else from the last command's stdout, and prints one line per tool,
// sorted by name: "NAME: N N N", every distinct number its description
// and input schema state (in text, and as numeric keywords), ascending.
func cmdStatedNumbers(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "statednumbers")
	file := "stdout"
	if len(args) == 1 && strings.HasPrefix(args[0], "@") {
		file = args[0][1:]
	} else if len(args) != 0 {
		ts.Fatalf("usage: statednumbers [@FILE]")
	}
	var list []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		InputSchema any    `json:"inputSchema"`
	}
	if err := json.Unmarshal([]byte(ts.ReadFile(file)), &list); err != nil {
		ts.Fatalf("statednumbers: %s is not a tool list: %v", file, err)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	var out strings.Builder
	for _, tl := range list {
		seen := map[int]bool{}
		addText := func(s string) {
			for _, m := range statedNumberRe.FindAllString(s, -1) {
				if n, err := strconv.Atoi(strings.ReplaceAll(m, ",", "")); err == nil {
					seen[n] = true
				}
			}
		}
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				for _, e := range x {
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			case float64:
				seen[int(x)] = true
			case string:
				addText(x)
			}
		}
		addText(tl.Description)
		walk(tl.InputSchema)
		nums := make([]int, 0, len(seen))
		for n := range seen {
			nums = append(nums, n)
		}
		sort.Ints(nums)
		fmt.Fprintf(&out, "%s:", tl.Name)
		for _, n := range nums {
			fmt.Fprintf(&out, " %d", n)
		}
		out.WriteByte('\n')
	}
	ts.Stdout().Write([]byte(out.String()))
}
