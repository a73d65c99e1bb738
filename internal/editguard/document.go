package editguard

import (
	"bytes"

	"golang.org/x/text/encoding/unicode"
)

// DocumentText is the text an editor's document shows for a file's bytes:
// editors keep a UTF-8 BOM out of the document and decode UTF-16 (with its
// BOM). Other bytes are the text as they are.
func DocumentText(disk []byte) []byte {
	switch {
	case bytes.HasPrefix(disk, []byte{0xEF, 0xBB, 0xBF}):
		return disk[3:]
	case bytes.HasPrefix(disk, []byte{0xFF, 0xFE}), bytes.HasPrefix(disk, []byte{0xFE, 0xFF}):
		endian := unicode.LittleEndian
		if disk[0] == 0xFE {
			endian = unicode.BigEndian
		}
		if out, err := unicode.UTF16(endian, unicode.ExpectBOM).NewDecoder().Bytes(disk); err == nil {
			return out
		}
	}
	return disk
}
