package ops

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A temp name fits in NAME_MAX whatever the file's name, and still says
// whose it is.
func TestTempNameFitsLongNames(t *testing.T) {
	for _, base := range []string{"a.txt", strings.Repeat("L", 255), strings.Repeat("é", 127)} {
		name := tempName(base, 4242, "0123456789ab")
		if len(name) > maxNameBytes || !strings.HasPrefix(name, TempPrefix) || !ownTemp(name, 4242) || !utf8.ValidString(name) {
			t.Errorf("tempName(%d-byte name) = %q (%d bytes)", len(base), name, len(name))
		}
	}
}
