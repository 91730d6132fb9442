# probe.mk - the egress probes from Makefile recipes (issue 32), for
# tests/integration/egress_adversary.sh.  The developer tier lets a recipe
# run anything it likes: the compiler, a program it just built, python3,
# bash's /dev/tcp, curl.  The kernel and the proxy must hold all the same.
#
#   make -s -f probe.mk probe ARGS="port=P uport=U host4=A ..."
#   make -s -f probe.mk autobind ARGS="..."   (waits for a line on stdin)
#
# Output as netprobe.c's, each name prefixed with mk.c., mk.py. or mk.sh.
CC ?= cc
ARGS ?=
TIMEOUT ?= 10
PORT = $(patsubst port=%,%,$(filter port=%,$(ARGS)))
UPORT = $(or $(patsubst uport=%,%,$(filter uport=%,$(ARGS))),$(PORT))
HOST4 = $(patsubst host4=%,%,$(filter host4=%,$(ARGS)))
PROXY = $(or $(patsubst proxy=%,%,$(filter proxy=%,$(ARGS))),127.0.0.1:3128)

.PHONY: probe probe-c probe-py probe-sh autobind

probe: probe-c probe-py probe-sh

netprobe-mk: netprobe.c
	$(CC) -O1 -o $@ netprobe.c

probe-c: netprobe-mk
	./netprobe-mk prefix=mk.c. $(ARGS) all

probe-py:
	python3 probe.py prefix=mk.py. $(ARGS) all

# bash and curl, with the proxy variables ignored or used against the rules
probe-sh:
	@for t in lo4:127.0.0.1 $(if $(HOST4),host4:$(HOST4)); do \
	    if timeout $(TIMEOUT) bash -c 'exec 3<>/dev/tcp/$${1#*:}/$(PORT) && head -n 1 <&3' _ $$t 2>/dev/null | grep -q .; \
	    then echo "mk.sh.devtcp_$${t%%:*}=reached"; else echo "mk.sh.devtcp_$${t%%:*}=refused:status-$$?"; fi; \
	    r=$$(timeout $(TIMEOUT) bash -c 'exec 3<>/dev/udp/$${1#*:}/$(UPORT) && echo udp-probe >&3 && timeout 2 head -n 1 <&3' _ $$t 2>/dev/null); \
	    if [ -n "$$r" ]; then echo "mk.sh.devudp_$${t%%:*}=reached"; else echo "mk.sh.devudp_$${t%%:*}=refused:no-reply"; fi; \
	done
	@if command -v curl >/dev/null 2>&1; then \
	    r=$$(curl -s --http0.9 --noproxy '*' -m $(TIMEOUT) http://127.0.0.1:$(PORT)/ 2>/dev/null | head -c 64); \
	    case "$$r" in *agentgate-outside*) echo mk.sh.curl_direct_lo4=reached;; *) echo mk.sh.curl_direct_lo4=refused:no-answer;; esac; \
	    r=$$(curl -s --http0.9 --noproxy '' -x http://$(PROXY) -m $(TIMEOUT) -w ' code=%{http_code}' http://127.0.0.1:$(PORT)/ 2>/dev/null | tail -c 200); \
	    case "$$r" in *agentgate-outside*) echo mk.sh.curl_proxy_get_lo4=reached;; *) echo "mk.sh.curl_proxy_get_lo4=refused:$${r##*code=}";; esac; \
	    c=$$(curl -s --http0.9 -o /dev/null -w '%{http_connect}' -p --noproxy '' -x http://$(PROXY) -m $(TIMEOUT) http://127.0.0.1:$(PORT)/ 2>/dev/null); \
	    case "$$c" in 2*) echo "mk.sh.curl_proxy_tunnel_lo4=reached:$$c";; *) echo "mk.sh.curl_proxy_tunnel_lo4=refused:$$c";; esac; \
	fi

autobind: netprobe-mk
	./netprobe-mk prefix=mk.c. $(ARGS) autobind
	python3 probe.py prefix=mk.py. $(ARGS) autobind
