// Verifies one webhook delivery (Go, standard library only).
//
//	WEBHOOK_SECRET=<secret>[,<previous secret>] go run verify.go "<x-svc-signature>" ["<x-svc-timestamp>"] < body
//
// The body on stdin must be the raw bytes as received. Exit status 0: genuine and fresh; 1: rejected.
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const toleranceMs = 5 * 60 * 1000

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func reject(reason string) {
	fmt.Fprintf(os.Stderr, "rejected: %s\n", reason)
	os.Exit(1)
}

func main() {
	var secrets []string
	for _, secret := range strings.Split(os.Getenv("WEBHOOK_SECRET"), ",") {
		if secret != "" {
			secrets = append(secrets, secret)
		}
	}
	if len(secrets) == 0 {
		reject("WEBHOOK_SECRET is not set")
	}
	if len(os.Args) != 2 && len(os.Args) != 3 {
		reject(`usage: verify "<x-svc-signature>" ["<x-svc-timestamp>"] < body`)
	}

	// x-svc-signature: t=<milliseconds>,v1=<hex>[,v1=<hex>] (one v1 per live secret while a secret is rotated).
	t := ""
	var given [][]byte
	for _, part := range strings.Split(os.Args[1], ",") {
		key, value, _ := strings.Cut(part, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if key == "t" {
			t = value
		} else if key == "v1" && hex64.MatchString(value) {
			signature, _ := hex.DecodeString(value)
			given = append(given, signature)
		}
	}
	timestamp, err := strconv.ParseInt(t, 10, 64)
	if err != nil || timestamp < 0 {
		reject("no t= timestamp in the signature header")
	}
	if len(given) == 0 {
		reject("no v1= signature in the signature header")
	}
	if len(os.Args) == 3 && os.Args[2] != t {
		reject("x-svc-timestamp differs from t")
	}
	age := time.Now().UnixMilli() - timestamp
	if age > toleranceMs || age < -toleranceMs {
		reject("timestamp is more than 5 minutes from now")
	}

	body, err := io.ReadAll(os.Stdin)
	if err != nil {
		reject("cannot read the body: " + err.Error())
	}
	// HMAC-SHA256 over "<t>.<raw body>", keyed with the secret's text as given (not hex-decoded).
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(t + "."))
		mac.Write(body)
		expected := mac.Sum(nil)
		for _, signature := range given {
			if hmac.Equal(signature, expected) {
				fmt.Println("ok")
				return
			}
		}
	}
	reject("no v1 signature matches")
}
