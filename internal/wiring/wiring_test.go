package wiring

import (
	"net"
	"testing"

	"github.com/samsa-io/samsa/actors/config"
)

func TestAdvertisedAddress(t *testing.T) {
	cfg, err := config.Load(config.Input{Origin: "test", Values: map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	bound := []net.Addr{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 41234}}
	if h, p := Advertised(cfg, bound); h != "127.0.0.1" || p != 41234 {
		t.Errorf("port 0 listener advertised as %s:%d", h, p)
	}
	cfg, err = config.Load(config.Input{Origin: "test", Values: map[string]string{
		"listeners": "PLAINTEXT://0.0.0.0:9092", "advertised.listeners": "PLAINTEXT://kafka.example:19092"}})
	if err != nil {
		t.Fatal(err)
	}
	if h, p := Advertised(cfg, bound); h != "kafka.example" || p != 19092 {
		t.Errorf("advertised.listeners ignored: %s:%d", h, p)
	}
	nc := NetloopConfig(cfg, nil)
	if len(nc.Listeners) != 1 || nc.Listeners[0] != "0.0.0.0:9092" || nc.EventLoops != 0 || nc.MaxRequestBytes != 104857600 {
		t.Errorf("netloop config %+v", nc)
	}
}
