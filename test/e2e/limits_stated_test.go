package e2e

// Limits given through the protocol: initializationOptions and settings
// files change what tools/list states, and bad values fail initialize.
// The editor's value winning per name, live changes and a bad settings
// file are TestFoldersConfigLimits' and
// TestLiveSettingsLimitsApplyLiveAndToNextSession's. What the calls enforce under the default and
// custom limits is in the scripts (cmd/agentls/testdata/script:
// governance/description_numbers_are_limits, limits_from_settings_file_enforced,
// bash_limits_at_and_one_past, default_limits_printed, and
// {read,ls,grep,find}/limits_at_and_one_past).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/test/harness"
	"go.lsp.dev/jsonrpc2"
)

// limitsStart starts agentls on ws and initializes it with the given
// initializationOptions (nil for none).
func limitsStart(t *testing.T, ws string, opts map[string]any) (*harness.Client, context.Context) {
	t.Helper()
	p := map[string]any{}
	if opts != nil {
		p["initializationOptions"] = opts
	}
	return startIn(t, ws, p)
}

var limitsNumRe = regexp.MustCompile(`\b(\d[\d,]*\d|\d)\b`)

// limitsNumbers returns every number in the tool's description and schema
// (numeric keywords and numbers inside any string), with where it was seen.
func limitsNumbers(tool map[string]any) map[int][]string {
	out := map[int][]string{}
	addText := func(where, s string) {
		for _, m := range limitsNumRe.FindAllString(s, -1) {
			n, err := strconv.Atoi(strings.ReplaceAll(m, ",", ""))
			if err == nil {
				out[n] = append(out[n], where)
			}
		}
	}
	addText("description", fmt.Sprint(tool["description"]))
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(where+"."+k, e)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", where, i), e)
			}
		case float64:
			out[int(x)] = append(out[int(x)], where)
		case string:
			addText(where, x)
		}
	}
	walk("inputSchema", tool["inputSchema"])
	return out
}

func limitsSchemaNum(t *testing.T, tool map[string]any, prop, key string) (int, bool) {
	t.Helper()
	props, _ := tool["inputSchema"].(map[string]any)["properties"].(map[string]any)
	p, _ := props[prop].(map[string]any)
	v, ok := p[key].(float64)
	return int(v), ok
}

func limitsPropDesc(tool map[string]any, prop string) string {
	props, _ := tool["inputSchema"].(map[string]any)["properties"].(map[string]any)
	p, _ := props[prop].(map[string]any)
	return fmt.Sprint(p["description"])
}

// limitsCustom is a small value for every key docs/protocol.md lists.
var limitsCustom = map[string]any{
	"readLines": 37, "readBytes": 4321, "readLineChars": 43, "lsEntries": 7,
	"grepMatches": 9, "grepLineChars": 47, "grepBytes": 4444, "findPaths": 11,
	"bashTimeout": 3, "bashMaxTimeout": 17, "bashLines": 23, "bashBytes": 4567,
}

// limitsCheckCustomDescriptions: the custom numbers are stated, and no
// default number of a changed limit appears in any description or schema.
func limitsCheckCustomDescriptions(t *testing.T, tools map[string]map[string]any, lim map[string]int) {
	t.Helper()
	type want struct {
		tool  string
		key   string
		stale []int
	}
	for _, w := range []want{
		{"read", "readLines", []int{2000}}, {"read", "readBytes", []int{51200}}, {"read", "readLineChars", []int{2000}},
		{"ls", "lsEntries", []int{500}},
		{"grep", "grepMatches", []int{100}}, {"grep", "grepLineChars", []int{500}}, {"grep", "grepBytes", []int{51200}},
		{"find", "findPaths", []int{1000}},
		{"bash", "bashTimeout", []int{120}}, {"bash", "bashMaxTimeout", []int{600}}, {"bash", "bashLines", []int{2000}}, {"bash", "bashBytes", []int{51200}},
	} {
		n, set := lim[w.key]
		if !set {
			continue
		}
		nums := limitsNumbers(tools[w.tool])
		if _, ok := nums[n]; !ok {
			t.Errorf("%s: custom %s=%d not stated anywhere", w.tool, w.key, n)
		}
		for _, s := range w.stale {
			if where, ok := nums[s]; ok {
				t.Errorf("%s: stale default %d of %s still stated at %v", w.tool, s, w.key, where)
			}
		}
	}
	if max, set := lim["bashMaxTimeout"]; set {
		if got, ok := limitsSchemaNum(t, tools["bash"], "timeout", "maximum"); !ok || got != max {
			t.Errorf("bash timeout schema maximum = %d (%v), want %d", got, ok, max)
		}
	}
	if n, set := lim["readLines"]; set {
		if d := limitsPropDesc(tools["read"], "limit"); !strings.Contains(d, strconv.Itoa(n)) {
			t.Errorf("read.limit description %q lacks %d", d, n)
		}
	}
	// Per-call maxima stay where they are when the defaults are lowered.
	for _, tc := range []struct {
		tool string
		max  int
	}{{"ls", 5000}, {"grep", 1000}, {"find", 10000}} {
		if got, _ := limitsSchemaNum(t, tools[tc.tool], "limit", "maximum"); got != tc.max {
			t.Errorf("%s limit maximum = %d, want %d", tc.tool, got, tc.max)
		}
	}
}

func limitsInts(m map[string]any) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		out[k] = v.(int)
	}
	return out
}

// TestLimitsCustomStatedAndEnforced: custom limits, from
// initializationOptions or from .agentls/settings.json (the grouped spelling
// is internal/settings' TestInitOptionsLimits),
// change every description and schema the session lists, and the session
// enforces them (a read of 38 lines under readLines 37 shows 35; the other
// numbers are enforced in governance/limits_from_settings_file_enforced).
func TestLimitsCustomStatedAndEnforced(t *testing.T) {
	t.Parallel()
	settings, _ := json.Marshal(map[string]any{"limits": limitsCustom})
	for _, tc := range []struct {
		name     string
		opts     map[string]any
		settings string
		want     map[string]int
	}{
		{"initialization options", map[string]any{"limits": limitsCustom}, "", limitsInts(limitsCustom)},
		{"settings file", nil, string(settings), limitsInts(limitsCustom)},
		{"bytes alone", map[string]any{"limits": map[string]any{"readBytes": 4321, "grepBytes": 4444}}, "", map[string]int{"readBytes": 4321, "grepBytes": 4444}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			writeFile(t, filepath.Join(ws, "l38"), numberedLines(38, strconv.Itoa))
			if tc.settings != "" {
				writeFile(t, filepath.Join(ws, ".agentls/settings.json"), tc.settings)
			}
			c, ctx := limitsStart(t, ws, tc.opts)
			limitsCheckCustomDescriptions(t, listedTools(t, c, ctx, map[string]any{"includeDeferred": true}), tc.want)
			if _, set := tc.want["readLines"]; set {
				r := c.CallTool(ctx, "read", map[string]any{"path": "l38"})
				wantResult(t, "read", r, false, "lines 1-35 of 38", "offset=36", "37 lines")
			}
		})
	}
}

// TestLimitsBadInitOptions: a limit out of its range or of the wrong
// type fails initialize with -32602 naming the field (every range is
// internal/tools' TestLimitsWith); an unknown key is a window/logMessage
// warning; a maximum timeout below the default lowers the default too.
func TestLimitsBadInitOptions(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for _, tc := range []struct {
		name   string
		limits any
		field  string
	}{
		{"negative", map[string]any{"readLines": -1}, "readLines"},
		{"string", map[string]any{"grepMatches": "many"}, "grepMatches"},
		{"grouped out of range", map[string]any{"read": map[string]any{"lines": 0}}, "readLines"},
		{"not an object", "lots", "limits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := harness.Start(t, harness.Options{Root: ws}).Call(testCtx(t, 20*time.Second), "initialize",
				map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"limits": tc.limits}}, &map[string]any{})
			if err == nil {
				t.Fatalf("initialize accepted limits %v", tc.limits)
			}
			var je *jsonrpc2.Error
			if !errors.As(err, &je) || je.Code != jsonrpc2.InvalidParams {
				t.Errorf("error is not -32602: %#v", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error does not name %s: %v", tc.field, err)
			}
		})
	}
	t.Run("unknown key warned", func(t *testing.T) {
		c, ctx := limitsStart(t, ws, map[string]any{"limits": map[string]any{"readLinez": 10}})
		if _, ok := c.WaitNote(5*time.Second, func(n harness.Note) bool {
			return n.Method == "window/logMessage" && strings.Contains(string(n.Params), "readLinez")
		}); !ok {
			t.Errorf("no window/logMessage naming the unknown limit readLinez")
		}
		tools := listedTools(t, c, ctx, map[string]any{"includeDeferred": true})
		if !strings.Contains(fmt.Sprint(tools["read"]["description"]), "2000 lines") {
			t.Errorf("unknown key changed read's description")
		}
	})
	t.Run("max timeout below default lowers it", func(t *testing.T) {
		c, ctx := limitsStart(t, ws, map[string]any{"limits": map[string]any{"bashMaxTimeout": 9}})
		tools := listedTools(t, c, ctx, map[string]any{"includeDeferred": true})
		nums := limitsNumbers(tools["bash"])
		if nums[120] != nil || nums[600] != nil || nums[9] == nil {
			t.Errorf("bash description with bashMaxTimeout 9: %s / %s", tools["bash"]["description"], limitsPropDesc(tools["bash"], "timeout"))
		}
		if !strings.Contains(limitsPropDesc(tools["bash"], "timeout"), "default 9, maximum 9") {
			t.Errorf("timeout description %q, want default 9, maximum 9", limitsPropDesc(tools["bash"], "timeout"))
		}
	})
}
