package builtin

import (
	"net/http"
	"strings"
	"testing"
)

// sniffImage checks the four image signatures itself; it must name what
// http.DetectContentType names, for those types only.
func TestSniffImageAgreesWithDetectContentType(t *testing.T) {
	inputs := map[string]string{
		"png":            string(pngBytes),
		"png header":     "\x89PNG\r\n\x1a\n",
		"png cut":        "\x89PNG\r\n\x1a",
		"jpeg":           "\xFF\xD8\xFF\xE0\x00\x10JFIF",
		"jpeg cut":       "\xFF\xD8",
		"gif87":          "GIF87a\x01\x00",
		"gif89":          "GIF89a\x01\x00",
		"gif other":      "GIF90a",
		"webp":           "RIFF\x24\x00\x00\x00WEBPVP8 ",
		"webp short":     "RIFF\x24\x00\x00\x00WEBPV",
		"riff wave":      "RIFF\x24\x00\x00\x00WAVEfmt ",
		"bmp":            "BM\x3a\x00\x00\x00",
		"ico":            "\x00\x00\x01\x00",
		"text":           "package main\n",
		"text png later": "see \x89PNG\r\n\x1a\n",
		"space then png": " \x89PNG\r\n\x1a\n",
		"html":           "<html><img src=x.png>",
		"pdf":            "%PDF-1.7",
		"empty":          "",
	}
	images := map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}
	for name, in := range inputs {
		want := http.DetectContentType([]byte(in))
		if !images[want] {
			want = ""
		}
		if got := sniffImage([]byte(in)); got != want {
			t.Errorf("%s: sniffImage = %q, DetectContentType says %q", name, got, want)
		}
	}
}

func TestLineNumberIsSixWideThenArrow(t *testing.T) {
	for n, want := range map[int]string{1: "     1→", 42: "    42→", 999999: "999999→", 1234567: "1234567→"} {
		if got := string(lineNumber([]byte("x"), n)); got != "x"+want {
			t.Errorf("lineNumber(%d) = %q, want %q", n, got, "x"+want)
		}
	}
	if got := strings.Count(string(lineNumber(nil, 7)), "→"); got != 1 {
		t.Errorf("one arrow, got %d", got)
	}
}
