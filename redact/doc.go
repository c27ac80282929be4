// Package redact removes secrets from text before it is kept or sent: the
// agent redacts every tool result before it is appended to a session (and so
// before it is written, kept as a blob, printed as an event or sent to a
// model), and export --redact redacts session lines (JSON).
//
// A secret is replaced by [REDACTED:<rule>], so a reader sees that something
// was there and what kind it was, and the count of replacements is returned so
// callers can record it. The same text always gives the same result, and
// redacting a redacted text changes nothing.
//
// # Rules
//
// The built-in table (rules.go, listed by Default) covers the families of
// the well-known secret scanners' rule lists, each as its own rule:
//
//   - key blocks: PEM private keys (RSA, EC, OPENSSH, PKCS#8, encrypted) and
//     PGP private key blocks (private-key);
//   - cloud keys: AWS access key ids (aws-access-key), Google API keys,
//     Azure storage AccountKey=/SharedAccessKey= and SAS sig= (azure-*),
//     DigitalOcean tokens; AWS secret keys and GCP private keys by their names;
//   - tokens with a shape of their own: GitHub, GitLab, npm, PyPI, Hugging
//     Face, Slack tokens and webhooks, Discord tokens and webhooks, Telegram
//     bot tokens, Twilio, SendGrid, Mailgun, Stripe (sk_/rk_ live and test,
//     whsec_), Shopify, OpenAI and Anthropic keys (api-key), JWTs;
//   - Authorization and Proxy-Authorization values (authorization);
//   - credentials in URLs and connection strings, for any scheme:
//     https://user:pw@host, postgres://, mysql://, mongodb+srv://,
//     redis://:pw@, amqp:// (url-credentials);
//   - passwords on command lines: curl -u user:pw, mysql -pPW, sshpass -p,
//     redis-cli -a, --password value, .netrc lines (cli-password);
//   - values known by their name: a name that ends with password, passwd,
//     passphrase, pwd, secret, token, apikey, auth, credential(s), key or
//     pass (PASSWORD, api_key, clientSecret, X-Api-Key) given a value as
//     NAME=value anywhere on a line (env, flags, query strings, DSNs),
//     name: value or name = value at a line's start (YAML, INI), "name":
//     "value" and name = "value" (JSON, code), and as a header
//     (secret-assignment, secret-json, secret-header).
//
// Look-alikes stay: hashes, UUIDs and base64 have no rule of their own; a
// word inside a longer name (tokenizer, keyboard, password_hash, KEY_UP)
// names no secret; "key" and "pass" alone count only in KEY=value; a value
// that reads as code (token := lexer.Next(), Password: req.Password), a
// reference ($TOKEN, ${{ secrets.X }}), a path or a keyword is kept; so are
// URLs without a password. testdata/corpus holds the secrets each rule must
// catch and the look-alikes that must come through byte for byte.
//
// # Cost
//
// The rules are compiled on first use, not when the package is initialised
// or a Redactor made, so a command that redacts nothing pays nothing. Each
// rule has hints, lowercase literals a line must hold for its pattern to be
// tried; one pass of an automaton over the text finds the lines that hold
// any (so a megabyte of build output costs about a millisecond, however
// many rules there are), and the words of secret names count only where an
// = or : follows them.
//
// Use: New(nil) gives the built-in rules (pass patterns to add your own,
// which run on the whole text); Redact(text) returns the text without its
// secrets and how many there were; RedactFile also treats every value of a
// .env file as secret; JSON redacts the string values of a JSON document
// (Example).
package redact
