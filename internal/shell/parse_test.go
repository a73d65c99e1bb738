package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// parseOnly is the benchmark reference: parsing without classifying.
func parseOnly(src string) int {
	n := 0
	p := syntax.NewParser(syntax.Variant(syntax.LangBash))
	for _, err := range p.StmtsSeq(strings.NewReader(src)) {
		if err == nil {
			n++
		}
	}
	return n
}
