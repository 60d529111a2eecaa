package inbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// token signs a decision form for user and the request id, issued at now:
// "unix seconds.signature". It holds no secret and is valid for TokenTTL.
func (h *Handler) token(user, id string, now time.Time) string {
	ts := strconv.FormatInt(now.Unix(), 10)
	return ts + "." + h.sign(user, id, ts)
}

func (h *Handler) sign(user, id, ts string) string {
	m := hmac.New(sha256.New, h.cfg.key)
	// Lengths first: no user name can move where the ID begins.
	m.Write([]byte("toolsafe-inbox-decide\x00" + strconv.Itoa(len(user)) + ":" + user + "\x00" + strconv.Itoa(len(id)) + ":" + id + "\x00" + ts))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// validToken reports whether tok was issued by this handler for user and
// id within TokenTTL of now.
func (h *Handler) validToken(tok, user, id string, now time.Time) bool {
	ts, sig, ok := strings.Cut(tok, ".")
	if !ok {
		return false
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	issued := time.Unix(sec, 0)
	if now.Sub(issued) > TokenTTL || issued.Sub(now) > time.Minute {
		return false
	}
	return hmac.Equal([]byte(sig), []byte(h.sign(user, id, ts)))
}
