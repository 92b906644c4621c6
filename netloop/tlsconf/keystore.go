package tlsconf

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/youmark/pkcs8"
	"software.sslmate.com/src/go-pkcs12"
)

// Getter returns a setting's value and the key it was found under (a
// listener override such as listener.name.ssl.ssl.keystore.location, or
// the key itself), for error messages; value is "" when unset.
type Getter func(key string) (value, from string)

// Kafka's keys read here.
const (
	KeyKeystoreType        = "ssl.keystore.type"
	KeyKeystoreLocation    = "ssl.keystore.location"
	KeyKeystorePassword    = "ssl.keystore.password"
	KeyKeyPassword         = "ssl.key.password"
	KeyKeystoreKey         = "ssl.keystore.key"
	KeyKeystoreChain       = "ssl.keystore.certificate.chain"
	KeyTruststoreType      = "ssl.truststore.type"
	KeyTruststoreLocation  = "ssl.truststore.location"
	KeyTruststorePassword  = "ssl.truststore.password"
	KeyTruststoreCerts     = "ssl.truststore.certificates"
	KeyClientAuth          = "ssl.client.auth"
	KeyEnabledProtocols    = "ssl.enabled.protocols"
	KeyProtocol            = "ssl.protocol"
	KeyCipherSuites        = "ssl.cipher.suites"
	KeyPrincipalMapping    = "ssl.principal.mapping.rules"
	KeyEndpointIdentAlgo   = "ssl.endpoint.identification.algorithm"
	jksMagic               = "\xfe\xed\xfe\xed"
	keytoolConvertTemplate = "keytool -importkeystore -srckeystore %[1]s -destkeystore %[1]s.p12 -deststoretype PKCS12, then set %[2]s=PKCS12"
)

// Keystore is a listener's certificate and key, served to handshakes
// through GetCertificate and read again by Reload.
type Keystore struct {
	cert atomic.Pointer[tls.Certificate]
}

// LoadKeystore reads the keystore the settings name.
func LoadKeystore(get Getter) (*Keystore, error) {
	ks := &Keystore{}
	if err := ks.Reload(get); err != nil {
		return nil, err
	}
	return ks, nil
}

// Reload reads the keystore again (its file may have been replaced, or
// the settings changed). On error the current certificate stays.
func (ks *Keystore) Reload(get Getter) error {
	cert, err := readKeystore(get)
	if err != nil {
		return err
	}
	ks.cert.Store(cert)
	return nil
}

// GetCertificate is tls.Config.GetCertificate: the current certificate.
func (ks *Keystore) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return ks.cert.Load(), nil
}

// Leaf is the current certificate's leaf.
func (ks *Keystore) Leaf() *x509.Certificate { return ks.cert.Load().Leaf }

func readKeystore(get Getter) (*tls.Certificate, error) {
	typ, typeKey := get(KeyKeystoreType)
	typ = storeType(typ)
	loc, locKey := get(KeyKeystoreLocation)
	inlineKey, inlineKeyKey := get(KeyKeystoreKey)
	chain, chainKey := get(KeyKeystoreChain)
	keyPass, _ := get(KeyKeyPassword)
	if inlineKey != "" || chain != "" {
		switch {
		case typ != "PEM":
			return nil, fmt.Errorf("%s and %s need %s=PEM, not %q", inlineKeyKey, chainKey, typeKey, typ)
		case loc != "":
			return nil, fmt.Errorf("%s and %s are set together with %s; set one or the other", inlineKeyKey, chainKey, locKey)
		case inlineKey == "" || chain == "":
			return nil, fmt.Errorf("%s and %s must be set together", inlineKeyKey, chainKey)
		}
		cert, err := pemKeyPair([]byte(inlineKey+"\n"+chain), keyPass)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", inlineKeyKey, chainKey, err)
		}
		return cert, nil
	}
	if loc == "" {
		return nil, fmt.Errorf("%s is not set: a TLS listener needs a keystore (or %s=PEM with %s and %s)", KeyKeystoreLocation, KeyKeystoreType, KeyKeystoreKey, KeyKeystoreChain)
	}
	data, err := os.ReadFile(loc)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: cannot read the keystore: %w", locKey, loc, err)
	}
	var cert *tls.Certificate
	switch typ {
	case "PEM":
		cert, err = pemKeyPair(data, keyPass)
	case "PKCS12", "JKS":
		if bytes.HasPrefix(data, []byte(jksMagic)) {
			return nil, fmt.Errorf("%s=%s is a JKS keystore, which samsa cannot read; convert it: "+keytoolConvertTemplate, locKey, loc, loc, typeKey)
		}
		pass, _ := get(KeyKeystorePassword)
		cert, err = pkcs12KeyPair(data, pass, keyPass)
	default:
		return nil, fmt.Errorf("%s=%q is not supported: use PEM or PKCS12", typeKey, typ)
	}
	if err != nil {
		return nil, fmt.Errorf("%s=%s (%s %s): %w", locKey, loc, typeKey, typ, err)
	}
	return cert, nil
}

// pemKeyPair reads a PKCS#8 private key (encrypted with password when it
// is an ENCRYPTED PRIVATE KEY) and a certificate chain, leaf first.
func pemKeyPair(data []byte, password string) (*tls.Certificate, error) {
	var key crypto.PrivateKey
	var chain [][]byte
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		var err error
		switch block.Type {
		case "CERTIFICATE":
			chain = append(chain, block.Bytes)
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "ENCRYPTED PRIVATE KEY":
			if password == "" {
				return nil, fmt.Errorf("the private key is encrypted and %s is not set", KeyKeyPassword)
			}
			key, err = pkcs8.ParsePKCS8PrivateKey(block.Bytes, []byte(password))
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(block.Bytes)
		}
		if err != nil {
			return nil, fmt.Errorf("private key: %w", err)
		}
	}
	if key == nil {
		return nil, errors.New("no private key (want a PKCS#8 PRIVATE KEY or ENCRYPTED PRIVATE KEY block)")
	}
	if len(chain) == 0 {
		return nil, errors.New("no certificate (want CERTIFICATE blocks, the leaf first)")
	}
	return keyPair(key, chain)
}

// pkcs12KeyPair reads a PKCS#12 keystore's key and chain.
func pkcs12KeyPair(data []byte, password, keyPassword string) (*tls.Certificate, error) {
	key, leaf, cas, err := pkcs12.DecodeChain(data, password)
	if errors.Is(err, pkcs12.ErrIncorrectPassword) && keyPassword != "" && keyPassword != password {
		key, leaf, cas, err = pkcs12.DecodeChain(data, keyPassword)
	}
	if errors.Is(err, pkcs12.ErrIncorrectPassword) {
		return nil, fmt.Errorf("wrong password (%s)", KeyKeystorePassword)
	}
	if err != nil {
		return nil, err
	}
	chain := [][]byte{leaf.Raw}
	for _, ca := range cas {
		chain = append(chain, ca.Raw)
	}
	return keyPair(key, chain)
}

// keyPair checks that key belongs to the chain's leaf.
func keyPair(key crypto.PrivateKey, chain [][]byte) (*tls.Certificate, error) {
	leaf, err := x509.ParseCertificate(chain[0])
	if err != nil {
		return nil, fmt.Errorf("certificate: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("unsupported private key type %T", key)
	}
	pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(leaf.PublicKey) {
		return nil, errors.New("the private key does not belong to the first certificate")
	}
	return &tls.Certificate{Certificate: chain, PrivateKey: key, Leaf: leaf}, nil
}

// loadTruststore reads the CA certificates that verify clients; nil when
// none is configured (the system's roots then apply, as Java's default
// truststore would).
func loadTruststore(get Getter) (*x509.CertPool, error) {
	typ, typeKey := get(KeyTruststoreType)
	typ = storeType(typ)
	loc, locKey := get(KeyTruststoreLocation)
	inline, inlineKey := get(KeyTruststoreCerts)
	if inline != "" {
		if typ != "PEM" {
			return nil, fmt.Errorf("%s needs %s=PEM, not %q", inlineKey, typeKey, typ)
		}
		if loc != "" {
			return nil, fmt.Errorf("%s is set together with %s; set one or the other", inlineKey, locKey)
		}
		return pemPool([]byte(inline), inlineKey)
	}
	if loc == "" {
		return nil, nil
	}
	data, err := os.ReadFile(loc)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: cannot read the truststore: %w", locKey, loc, err)
	}
	switch typ {
	case "PEM":
		return pemPool(data, locKey+"="+loc)
	case "PKCS12", "JKS":
		if bytes.HasPrefix(data, []byte(jksMagic)) {
			return nil, fmt.Errorf("%s=%s is a JKS truststore, which samsa cannot read; convert it: "+keytoolConvertTemplate, locKey, loc, loc, typeKey)
		}
		pass, _ := get(KeyTruststorePassword)
		certs, err := pkcs12.DecodeTrustStore(data, pass)
		if err != nil {
			return nil, fmt.Errorf("%s=%s (%s %s): %w", locKey, loc, typeKey, typ, err)
		}
		pool := x509.NewCertPool()
		for _, c := range certs {
			pool.AddCert(c)
		}
		return pool, nil
	}
	return nil, fmt.Errorf("%s=%q is not supported: use PEM or PKCS12", typeKey, typ)
}

// storeType is a keystore or truststore type, upper case; unset is
// Kafka's default, JKS.
func storeType(v string) string {
	if v = strings.ToUpper(strings.TrimSpace(v)); v == "" {
		return "JKS"
	}
	return v
}

func pemPool(data []byte, what string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", what)
	}
	return pool, nil
}
