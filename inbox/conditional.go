package inbox

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// writeConditional answers a GET that the page's script repeats (the live
// part of the list, requests.json, audit.json) with body and an ETag of
// it. A request whose If-None-Match names that ETag, as a browser's
// revalidation does, gets 304 Not Modified and no body: an unchanged list
// costs its headers only, whatever its size (RFC 9110, sections 8.8.3 and
// 13.1.2). Cache-Control: no-cache makes every poll revalidate, and Vary
// says the answer depends on who asks (each person sees what they may
// decide).
func writeConditional(w http.ResponseWriter, r *http.Request, contentType string, body []byte) {
	sum := sha256.Sum256(body)
	tag := `"` + hex.EncodeToString(sum[:16]) + `"`
	h := w.Header()
	h.Set("ETag", tag)
	h.Set("Cache-Control", "no-cache")
	h.Add("Vary", "Cookie, Authorization")
	if matches(r.Header.Get("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// matches tells whether the If-None-Match value header names tag (or is
// "*"); weak tags compare by their opaque part, as RFC 9110 says for
// If-None-Match.
func matches(header, tag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == tag || t == "*" {
			return true
		}
	}
	return false
}
