package dashboard

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/utils/clock"
)

// SessionCookie holds a viewer's session on the dashboard the hub serves. The __Host- prefix
// makes browsers keep it only when it is Secure, has Path=/ and no Domain: no other host, and no
// plain-HTTP page of this one, can set or shadow it.
const SessionCookie = "__Host-flotilla-dashboard"

// SessionMaxAge bounds a session: its cookie's Max-Age, unless the token expires sooner.
const SessionMaxAge = 8 * time.Hour

// SessionKeyFile, in the dashboard's certificate directory, holds the key that seals sessions.
// Every replica must read the same one, or a session opens only on the replica that made it.
const SessionKeyFile = "session.key"

// minSessionKey is the shortest key the dashboard takes (bytes of the file).
const minSessionKey = 32

// Sessions seals a viewer's token into the session cookie and opens it again. The cookie holds
// the token encrypted and authenticated (AES-256-GCM) with a session id and an expiry, so a
// cookie read from a browser's disk or a log is no bearer token for the API server, and a
// session the viewer logged out of can be refused by id although the token itself lives on.
//
// Logouts are held in memory, and also in shared Revocations when ShareRevocations gave some
// (the hub's ConfigMapRevocations): then every replica refuses a cookie logged out on any one.
type Sessions struct {
	aead  cipher.AEAD
	clock clock.PassiveClock

	local  *memoryRevocations
	shared Revocations
}

// session is what the cookie seals.
type session struct {
	ID      string `json:"id"`
	Token   string `json:"tok"`
	Expires int64  `json:"exp"` // Unix seconds
}

// NewSessions seals with key (at least 32 bytes; hashed to AES-256's key) and dates sessions by
// clk.
func NewSessions(key []byte, clk clock.PassiveClock) (*Sessions, error) {
	if len(key) < minSessionKey {
		return nil, fmt.Errorf("the dashboard's session key has %d bytes, want at least %d: put a random one in %s (head -c 32 /dev/urandom | base64)",
			len(key), minSessionKey, SessionKeyFile)
	}
	k := sha256.Sum256(key)
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sessions{aead: aead, clock: clk, local: newMemoryRevocations(clk)}, nil
}

// ShareRevocations makes s record logouts in r and refuse the sessions r holds as well as those
// logged out here. Call it before s serves.
func (s *Sessions) ShareRevocations(r Revocations) *Sessions {
	s.shared = r
	return s
}

// RandomSessions seals with a key made now: sessions end with the process, and open only on it.
func RandomSessions(clk clock.PassiveClock) (*Sessions, error) {
	key := make([]byte, minSessionKey)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return NewSessions(key, clk)
}

// errSessionEnded is a cookie that no longer opens: expired, logged out, or sealed with another
// key (another replica's, or before a restart without a shared key).
var errSessionEnded = errors.New("your session has ended (logged out, expired, or made by another hub replica without the shared session key): log in again")

// Seal makes a session for token: the cookie's value and when it expires, SessionMaxAge from now
// or when token's own expiry says (a JWT's exp claim), whichever is first.
func (s *Sessions) Seal(token string) (string, time.Time, error) {
	now := s.clock.Now()
	expires := now.Add(SessionMaxAge)
	if exp, ok := jwtExpiry(token); ok && exp.Before(expires) {
		expires = exp
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return "", time.Time{}, err
	}
	plain, err := json.Marshal(session{ID: hex.EncodeToString(id), Token: token, Expires: expires.Unix()})
	if err != nil {
		return "", time.Time{}, err
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", time.Time{}, err
	}
	sealed := s.aead.Seal(nonce, nonce, plain, []byte(SessionCookie))
	return base64.RawURLEncoding.EncodeToString(sealed), time.Unix(expires.Unix(), 0), nil
}

// open is the session in value, or errSessionEnded when it does not open, has expired or was
// revoked.
func (s *Sessions) open(value string) (session, error) {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	n := s.aead.NonceSize()
	if err != nil || len(raw) < n {
		return session{}, errSessionEnded
	}
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(SessionCookie))
	if err != nil {
		return session{}, errSessionEnded
	}
	var ss session
	if err := json.Unmarshal(plain, &ss); err != nil || ss.ID == "" || ss.Token == "" {
		return session{}, errSessionEnded
	}
	now := s.clock.Now()
	if !now.Before(time.Unix(ss.Expires, 0)) {
		return session{}, errSessionEnded
	}
	if s.local.Revoked(ss.ID) || (s.shared != nil && s.shared.Revoked(ss.ID)) {
		return session{}, errSessionEnded
	}
	return ss, nil
}

// Token is the token of the session in value; errSessionEnded when it has ended.
func (s *Sessions) Token(value string) (string, error) {
	ss, err := s.open(value)
	return ss.Token, err
}

// Revoke ends the session in value, if it is one still open, until it would have expired: at
// once in this process, and in the shared Revocations if there are any. An error says the shared
// record failed, so that other replicas may still open the cookie.
func (s *Sessions) Revoke(ctx context.Context, value string) error {
	ss, err := s.open(value)
	if err != nil {
		return nil
	}
	expires := time.Unix(ss.Expires, 0)
	_ = s.local.Revoke(ctx, ss.ID, expires)
	if s.shared == nil {
		return nil
	}
	return s.shared.Revoke(ctx, ss.ID, expires)
}

// jwtExpiry is the exp claim of token when it is a JWT. It is read without checking the
// signature, only to end the session no later than the token: the API server checks the token.
func jwtExpiry(token string) (time.Time, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, false
	}
	var claims struct {
		Exp *json.Number `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.Exp == nil {
		return time.Time{}, false
	}
	sec, err := claims.Exp.Int64()
	if err != nil {
		f, ferr := claims.Exp.Float64()
		if ferr != nil {
			return time.Time{}, false
		}
		sec = int64(f)
	}
	return time.Unix(sec, 0), true
}
