# The official Python client (Debian's python3-kubernetes) against a kite cluster, one step per
# run: python3 python-client.py KUBECONFIG STEP [ARGS...]. Each step prints one JSON object for
# python-client.test.ts to check; every wait in here is bounded.
import json
import sys
import threading
import time

from kubernetes import client, config, watch
from kubernetes.stream import portforward, stream

kubeconfig, step, args = sys.argv[1], sys.argv[2], sys.argv[3:]
config.load_kube_config(config_file=kubeconfig)
v1 = client.CoreV1Api()
ns = 'default'


def busybox_pod(name, labels, command):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=labels),
        spec=client.V1PodSpec(
            termination_grace_period_seconds=0,
            containers=[client.V1Container(name='app', image='busybox:1.35', command=command)],
        ),
    )


def crud(name):
    created = v1.create_namespaced_pod(ns, busybox_pod(name, {'suite': 'python'}, ['sleep', '3600']))
    listed = v1.list_namespaced_pod(ns, label_selector='suite=python')
    patched = v1.patch_namespaced_pod(name, ns, {'metadata': {'labels': {'patched': 'yes'}}})
    got = v1.read_namespaced_pod(name, ns)
    return {
        'createdUid': created.metadata.uid,
        'listed': [p.metadata.name for p in listed.items],
        'patchedLabels': patched.metadata.labels,
        'readLabels': got.metadata.labels,
    }


def watch_pod(name):
    """Watches the namespace while creating, then deleting, a pod; returns the event types seen for it."""
    w = watch.Watch()
    seen = []
    started = threading.Event()

    def lifecycle():
        started.wait(10)
        v1.create_namespaced_pod(ns, busybox_pod(name, {'suite': 'python-watch'}, ['sleep', '3600']))
        deadline = time.time() + 90
        while time.time() < deadline:
            if v1.read_namespaced_pod(name, ns).status.phase == 'Running':
                break
            time.sleep(0.2)
        v1.delete_namespaced_pod(name, ns, grace_period_seconds=0)

    worker = threading.Thread(target=lifecycle, daemon=True)
    worker.start()
    started.set()
    for event in w.stream(v1.list_namespaced_pod, ns, label_selector='suite=python-watch', timeout_seconds=120):
        if event['object'].metadata.name != name:
            continue
        seen.append(event['type'])
        if event['type'] == 'DELETED':
            w.stop()
    worker.join(10)
    return {'types': seen}


def exec_pod(name, script):
    resp = stream(
        v1.connect_get_namespaced_pod_exec, name, ns,
        command=['sh', '-c', script], stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False,
    )
    out, err = '', ''
    deadline = time.time() + 60
    while resp.is_open() and time.time() < deadline:
        resp.update(timeout=1)
        out += resp.read_stdout(timeout=0) if resp.peek_stdout() else ''
        err += resp.read_stderr(timeout=0) if resp.peek_stderr() else ''
    code = resp.returncode
    resp.close()
    return {'stdout': out, 'stderr': err, 'returncode': code}


def exec_stdin(name):
    resp = stream(
        v1.connect_get_namespaced_pod_exec, name, ns,
        command=['sh', '-c', 'read line; echo "got: $line"'], stderr=True, stdin=True, stdout=True, tty=False, _preload_content=False,
    )
    resp.write_stdin('hello\n')
    out = ''
    deadline = time.time() + 60
    while resp.is_open() and time.time() < deadline:
        resp.update(timeout=1)
        if resp.peek_stdout():
            out += resp.read_stdout(timeout=0)
    code = resp.returncode
    resp.close()
    return {'stdout': out, 'returncode': code}


def port_forward(name, ports):
    """One forward for all `ports` (comma-separated); an HTTP GET through each of them, in turn."""
    numbers = [int(p) for p in ports.split(',')]
    pf = portforward(v1.connect_get_namespaced_pod_portforward, name, ns, ports=ports)
    results = {}
    for port in numbers:
        sock = pf.socket(port)
        sock.settimeout(30)
        chunks = []
        try:
            sock.sendall(b'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
            while True:
                data = sock.recv(65536)
                if not data:
                    break
                chunks.append(data)
        except OSError:
            pass  # the runtime could not connect: its error channel says why
        sock.close()
        head, _, body = b''.join(chunks).decode('utf-8', 'replace').partition('\r\n\r\n')
        results[str(port)] = {'statusLine': head.split('\r\n')[0], 'body': body, 'error': pf.error(port)}
    pf.close()
    return results


steps = {'crud': crud, 'watch': watch_pod, 'exec': exec_pod, 'exec-stdin': exec_stdin, 'portforward': port_forward}
print(json.dumps(steps[step](*args)))
