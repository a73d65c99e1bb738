package builtin

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/agentls/agentls/internal/mention"
	"github.com/agentls/agentls/internal/ops"
	"github.com/agentls/agentls/internal/textedit"
	"github.com/agentls/agentls/internal/tools"
)

// The model sees files with their secrets masked ("[REDACTED:<kind>]").
// Two things follow for the tools that change files:
//   - what they quote back from the file (the closest region of an edit
//     that did not match) is cut from the masked text, line for line, as
//     the masker cannot recognise a secret inside the visible-whitespace
//     rendering or a key block's body line alone;
//   - a placeholder the model copied into oldText, newText or content
//     stands for a value it never saw: matching it cannot work, and writing
//     it would replace the real secret with the placeholder. Both are
//     refused with what to do instead.

// placeholder matches a masker's marker.
var placeholder = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\[REDACTED:[a-z0-9-]+\]`)
})

// copiedPlaceholder returns the first masker marker in text that file does
// not hold literally ("" when none): one the model copied from a masked
// read.
func copiedPlaceholder(file []byte, text string) string {
	for _, m := range placeholder().FindAllString(text, -1) {
		if !bytes.Contains(file, []byte(m)) {
			return m
		}
	}
	return ""
}

// refuseCopiedPlaceholders answers an edit whose oldText or newText holds a
// masked secret's placeholder.
func refuseCopiedPlaceholders(p ops.Path, old []byte, edits []textedit.Edit, names mention.Prefix) *tools.Result {
	for i, e := range edits {
		if m := copiedPlaceholder(old, e.OldText); m != "" {
			r := tools.ErrorIn(names, "oldText of edit %d contains %s: a secret in %s is masked in what you read, and the file holds the real value, which agentls never shows, so it cannot match. Make oldText end before the masked part or start after it; to change or remove that line itself, ask the user (or use {{bash}}, e.g. sed, on a pattern that leaves the value out).", i+1, m, p.Display())
			return &r
		}
		if m := copiedPlaceholder(old, e.NewText); m != "" {
			r := tools.Errorf("newText of edit %d contains %s, the mask of a secret you have not seen: writing it would replace the real value with the placeholder. Leave the masked part out of the edit (oldText and newText may end before it or start after it). Nothing was changed.", i+1, m)
			return &r
		}
	}
	return nil
}

// refuseCopiedContent answers a write whose content holds a masked
// secret's placeholder (old is the file's content, nil for a new file).
func refuseCopiedContent(p ops.Path, old []byte, content string, names mention.Prefix) *tools.Result {
	m := copiedPlaceholder(old, content)
	if m == "" {
		return nil
	}
	r := tools.ErrorIn(names, "content contains %s, the mask of a secret you have not seen (copied from a masked read): writing it would put the placeholder in %s instead of the real value. Use {{edit}} for the lines you change and leave the masked line out of it. Nothing was changed.", m, p.Display())
	return &r
}

// missMessage is the message of an edit that did not match, with what it
// quotes of the file cut from the masked text.
func missMessage(c *tools.Call, p ops.Path, old []byte, edits []textedit.Edit, me *textedit.MatchError) string {
	msg := me.MessageIn(p.Display(), c.Names())
	if me.Kind != textedit.KindNotFound || c.Masker() == nil {
		return msg
	}
	masked := maskedLines(string(old), c.Masker())
	if masked == string(old) {
		return msg // nothing secret to quote
	}
	_, err := textedit.Apply([]byte(masked), edits)
	var mme *textedit.MatchError
	if errors.As(err, &mme) && mme.Kind == textedit.KindNotFound && mme.EditIndex == me.EditIndex {
		return mme.MessageIn(p.Display(), c.Names())
	}
	// The masked text answers differently: name the edit, quote nothing.
	return fmt.Sprintf("oldText of edit %d not found in %s. Read the file again and copy oldText exactly from it (whitespace and line endings count).", me.EditIndex+1, p.Display())
}

// maskedLines masks text line by line (key blocks first, as read does), so
// line numbers stay those of the file.
func maskedLines(text string, m tools.Masker) string {
	text, _ = maskKeyLines(text)
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i], _ = m.Mask(l)
	}
	return strings.Join(lines, "\n")
}
