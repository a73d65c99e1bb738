package tools

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Registry holds every known tool (core, extension, MCP) and which of them
// are active, i.e. offered in tools/list. Deferred tools become active when
// tool_search finds them or when they are called by name.
type Registry struct {
	mu     sync.RWMutex
	tools  map[string]*Tool // by exact name
	order  []string         // registration order
	active map[string]bool
	// onChange is called (outside the lock) when the active set changes.
	onChange func()
	// searchNotes says which tool sources a search cannot see fully now
	// (upstream servers starting or down); tool_search adds its lines.
	searchNotes func() []string
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{tools: map[string]*Tool{}, active: map[string]bool{}}
}

// OnChange sets the listener for active-set changes (tools/listChanged).
func (r *Registry) OnChange(f func()) {
	r.mu.Lock()
	r.onChange = f
	r.mu.Unlock()
}

// SetSearchNotes sets what tool_search adds about tools it may be missing.
func (r *Registry) SetSearchNotes(f func() []string) {
	r.mu.Lock()
	r.searchNotes = f
	r.mu.Unlock()
}

// SearchNotes are the lines SetSearchNotes' function gives now, if any.
func (r *Registry) SearchNotes() []string {
	r.mu.RLock()
	f := r.searchNotes
	r.mu.RUnlock()
	if f == nil {
		return nil
	}
	return f()
}

// Register adds t. A name already taken is an error.
func (r *Registry) Register(t *Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[t.Name]; dup {
		return fmt.Errorf("tool %q is already registered", t.Name)
	}
	r.tools[t.Name] = t
	r.order = append(r.order, t.Name)
	if !t.Deferred {
		r.active[t.Name] = true
	}
	return nil
}

// MustRegister registers built-in tools, whose names cannot collide.
func (r *Registry) MustRegister(ts ...*Tool) {
	for _, t := range ts {
		if err := r.Register(t); err != nil {
			panic(err)
		}
	}
}

// Lookup finds a tool by name, case-insensitively as a fallback.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if t, ok := r.tools[name]; ok {
		return t, true
	}
	// A case variant (Read, BASH) names the tool only when one tool
	// matches it; otherwise the caller answers as for any unknown name.
	var found *Tool
	for _, n := range r.order {
		if strings.EqualFold(n, name) {
			if found != nil {
				return nil, false
			}
			found = r.tools[n]
		}
	}
	return found, found != nil
}

// Activate makes deferred tools active; it reports whether the set changed.
func (r *Registry) Activate(names ...string) bool {
	r.mu.Lock()
	changed := false
	for _, n := range names {
		if _, ok := r.tools[n]; ok && !r.active[n] {
			r.active[n] = true
			changed = true
		}
	}
	f := r.onChange
	r.mu.Unlock()
	if changed && f != nil {
		f()
	}
	return changed
}

// Replace swaps every tool of source for ts (extension tools after their
// files changed). A tool that stays keeps its place and stays active if it
// was (and becomes active if it is no longer deferred); a new one is active
// unless deferred; a name another source holds is an error and that tool is
// skipped. The change listener is called when what tools/list shows
// changed, not for a new command behind the same definition.
func (r *Registry) Replace(source string, ts []*Tool) (errs []error) {
	r.mu.Lock()
	before := r.activeSignatureLocked()
	next := make(map[string]*Tool, len(ts))
	for _, t := range ts {
		next[t.Name] = t
	}
	order := make([]string, 0, len(r.order)+len(ts))
	for _, n := range r.order {
		if old := r.tools[n]; old.Source == source {
			nt, stays := next[n]
			if !stays {
				delete(r.tools, n)
				delete(r.active, n)
				continue
			}
			r.tools[n] = nt
			if !nt.Deferred {
				r.active[n] = true
			}
			delete(next, n)
		}
		order = append(order, n)
	}
	r.order = order
	for _, t := range ts {
		if next[t.Name] != t {
			continue // stayed, handled above
		}
		if other, dup := r.tools[t.Name]; dup {
			errs = append(errs, fmt.Errorf("tool %q is already registered (source %s); skipped", t.Name, other.Source))
			continue
		}
		r.tools[t.Name] = t
		r.order = append(r.order, t.Name)
		if !t.Deferred {
			r.active[t.Name] = true
		}
	}
	changed := r.activeSignatureLocked() != before
	f := r.onChange
	r.mu.Unlock()
	if changed && f != nil {
		f()
	}
	return errs
}

// activeSignatureLocked is what tools/list shows of the active tools, for
// telling a real change from a reload that changed nothing visible.
func (r *Registry) activeSignatureLocked() string {
	var b strings.Builder
	for _, n := range r.order {
		if !r.active[n] {
			continue
		}
		t := r.tools[n]
		sig, _ := json.Marshal([]any{t.Name, t.Description, t.Schema, t.Annotations()})
		b.Write(sig)
		b.WriteByte('\n')
	}
	return b.String()
}

// List returns the active tools (or all, with includeDeferred) in
// registration order.
func (r *Registry) List(includeDeferred bool) []*Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []*Tool
	for _, n := range r.order {
		if includeDeferred || r.active[n] {
			out = append(out, r.tools[n])
		}
	}
	return out
}

// IsActive reports whether the tool is offered in tools/list.
func (r *Registry) IsActive(name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.active[name]
}

// Names returns the active tool names, sorted.
func (r *Registry) Names() []string {
	var names []string
	for _, t := range r.List(false) {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	return names
}

// closest returns the registered name nearest to name (edit distance), or "".
// foreignNames are other agents' names for the core tools, which models
// trained on those agents call by habit.
var foreignNames = map[string]string{
	"view": "read", "read_file": "read", "cat": "read", "open": "read",
	"glob": "find", "find_files": "find", "file_search": "find",
	"list_directory": "ls", "list_dir": "ls", "list_files": "ls",
	"search_file_content": "grep", "search": "grep", "ripgrep": "grep", "rg": "grep",
	"shell": "bash", "run_shell_command": "bash", "exec": "bash", "execute_command": "bash", "terminal": "bash",
	"replace": "edit", "multiedit": "edit", "str_replace": "edit", "str_replace_editor": "edit", "edit_file": "edit",
	"write_file": "write", "create_file": "write",
}

func (r *Registry) closest(name string) string {
	// functions.read, mcp__agentls__read: the name after the prefix.
	base := name
	if i := strings.LastIndex(base, "."); i >= 0 {
		base = base[i+1:]
	}
	if i := strings.LastIndex(base, "__"); i >= 0 {
		base = base[i+2:]
	}
	for _, n := range []string{strings.ToLower(base), foreignNames[strings.ToLower(base)]} {
		if t, ok := r.Lookup(n); ok && n != "" {
			return t.Name
		}
	}
	best, bestD := "", 1<<30
	for _, t := range r.List(true) {
		d := EditDistance(strings.ToLower(name), strings.ToLower(t.Name))
		if strings.Contains(strings.ToLower(t.Name), strings.ToLower(name)) || strings.Contains(strings.ToLower(name), strings.ToLower(t.Name)) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = t.Name, d
		}
	}
	if bestD > max(2, len(name)/2) {
		return ""
	}
	return best
}

// EditDistance is the Levenshtein distance of a and b in characters, for
// "did you mean" suggestions.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

const (
	// DefaultDeferThreshold is how many tools may be active before
	// ApplyDeferThreshold defers non-core ones.
	DefaultDeferThreshold = 30
	// ToolSearchName is the name of the tool that activates deferred
	// tools; the registry never defers it.
	ToolSearchName = "tool_search"
)

// ApplyDeferThreshold keeps the active list short: when more than n tools
// are active (n ≤ 0 means DefaultDeferThreshold), active non-core tools
// beyond the threshold, in registration order, are deferred; core tools
// (Source "core", which includes tool_search) always stay active, even if
// they alone exceed n. Only tools registered as not Deferred are demoted, so
// tools the model activated through tool_search or by calling them keep
// their place. Call it after registering a batch of tools; OnChange fires
// when the active set changed.
func (r *Registry) ApplyDeferThreshold(n int) {
	if n <= 0 {
		n = DefaultDeferThreshold
	}
	r.mu.Lock()
	count := 0
	for _, name := range r.order {
		if r.active[name] {
			count++
		}
	}
	changed := false
	if count > n {
		keep := n
		for _, name := range r.order {
			if t := r.tools[name]; r.active[name] && (t.Source == "core" || t.Name == ToolSearchName) {
				keep--
			}
		}
		for _, name := range r.order {
			t := r.tools[name]
			if !r.active[name] || t.Source == "core" || t.Name == ToolSearchName {
				continue
			}
			if keep > 0 || t.Deferred {
				keep--
				continue
			}
			delete(r.active, name)
			changed = true
		}
	}
	f := r.onChange
	r.mu.Unlock()
	if changed && f != nil {
		f()
	}
}
