package search

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// rgEventMax bounds how much of one rg JSON event is held. rg's JSON
// printer ignores --max-columns, so a match on a 500 MB line is a 500 MB
// event; only its head (the start of the line, more than grep ever shows)
// and its line number are kept, the rest is read past.
const rgEventMax = 1 << 20

var (
	linesText  = []byte(`"lines":{"text":"`)
	linesBytes = []byte(`"lines":{"bytes":"`)
	lineNumber = []byte(`"line_number":`)
)

// readLongEvent reads the rest of an event whose first head bytes (a full
// reader buffer, no newline yet) are in hand, holding at most rgEventMax of
// it. For a match or context event it returns the line number and the
// start of the line's bytes; for any other event only the bytes head, as
// such events are small unless they carry a line.
func readLongEvent(r *bufio.Reader, head []byte, scratch []byte) (ev []byte, n int, start []byte, err error) {
	scratch = append(scratch[:0], head...)
	isLine := bytes.HasPrefix(head, evMatch) || bytes.HasPrefix(head, evContext)
	ended := false // the event's newline has been read
	var chunk []byte
	next := func() error {
		chunk, err = r.ReadSlice('\n')
		switch {
		case err == nil:
			ended = true
		case errors.Is(err, bufio.ErrBufferFull):
			err = nil
		default:
			return err
		}
		return nil
	}
	// Fill the head up to rgEventMax: most long events end before it.
	for len(scratch) < rgEventMax {
		chunk, err = r.ReadSlice('\n')
		scratch = append(scratch, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return scratch, 0, nil, err
		}
	}
	if !isLine {
		return nil, 0, nil, errors.New("an rg event over 1 MiB that carries no line")
	}
	mark, isBytes := linesText, false
	at := bytes.Index(scratch, mark)
	if at < 0 {
		mark, isBytes = linesBytes, true
		at = bytes.Index(scratch, mark)
	}
	if at < 0 {
		return nil, 0, nil, errors.New("an rg line event over 1 MiB without its line")
	}
	body := scratch[at+len(mark):]
	// Then the rest of the line's JSON string up to its closing quote
	// (it may close within the head when submatches are what is long),
	// then the few fields after it, which hold the line number.
	var tail []byte
	if end, _ := closeQuote(body, false); end >= 0 {
		tail, body = append(tail, body[end+1:]...), body[:end]
	} else {
		esc := false
		for end < 0 && !ended {
			if err := next(); err != nil {
				return nil, 0, nil, err
			}
			if end, esc = closeQuote(chunk, esc); end >= 0 {
				tail = append(tail, chunk[end+1:]...)
			}
		}
	}
	for !numberEnds(tail) {
		if ended || len(tail) > 4096 {
			return nil, 0, nil, errors.New("an rg line event without its line number")
		}
		if err := next(); err != nil {
			return nil, 0, nil, err
		}
		tail = append(tail, chunk...)
	}
	i := bytes.Index(tail, lineNumber) + len(lineNumber)
	j := i
	for j < len(tail) && tail[j] >= '0' && tail[j] <= '9' {
		j++
	}
	if n, err = strconv.Atoi(string(tail[i:j])); err != nil {
		return nil, 0, nil, fmt.Errorf("rg line number: %w", err)
	}
	// Read past the rest of the event (its submatches may be long too).
	for !ended {
		if err := next(); err != nil {
			return nil, 0, nil, err
		}
	}
	start, err = decodePrefix(body, isBytes)
	return nil, n, start, err
}

// closeQuote finds the JSON string's closing quote in b, the string having
// been inside an escape when esc; it returns -1 and the escape state at the
// end of b when b has none.
func closeQuote(b []byte, esc bool) (int, bool) {
	for i, c := range b {
		switch {
		case esc:
			esc = false
		case c == '\\':
			esc = true
		case c == '"':
			return i, false
		}
	}
	return -1, esc
}

// numberEnds reports whether b holds "line_number": and digits followed
// by something else (the number is whole).
func numberEnds(b []byte) bool {
	i := bytes.Index(b, lineNumber)
	if i < 0 {
		return false
	}
	for i += len(lineNumber); i < len(b); i++ {
		if b[i] < '0' || b[i] > '9' {
			return true
		}
	}
	return false
}

// decodePrefix decodes the start of a JSON string body (or of base64 text
// with isBytes) cut anywhere, dropping a partial escape or quantum.
func decodePrefix(body []byte, isBytes bool) ([]byte, error) {
	if isBytes {
		body = body[:len(body)/4*4]
		out := make([]byte, base64.StdEncoding.DecodedLen(len(body)))
		n, err := base64.StdEncoding.Decode(out, body)
		if err != nil {
			return nil, fmt.Errorf("decode rg line: %w", err)
		}
		return out[:n], nil
	}
	// A cut escape is at most 11 bytes (a \uXXXX\uXXXX surrogate pair).
	for cut := 0; cut <= 12 && cut <= len(body); cut++ {
		var s string
		q := make([]byte, 0, len(body)-cut+2)
		q = append(append(append(q, '"'), body[:len(body)-cut]...), '"')
		if json.Unmarshal(q, &s) == nil {
			return []byte(s), nil
		}
	}
	return nil, errors.New("decode rg line: not a JSON string")
}
