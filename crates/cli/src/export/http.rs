//! The smallest HTTP/1.1 weft needs, on std sockets and threads (no async
//! runtime): a server that answers `GET` requests one at a time on its own
//! thread (`/metrics`, `/healthz`).
//!
//! Everything is bounded: request heads are at most 16 KiB, every read and
//! write has a timeout, and the server stops within 100 ms of being asked to.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// The largest request or response head read.
const MAX_HEAD: usize = 16 * 1024;
/// How long a peer may take to send its request or read our answer.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// An answer to one request.
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Response {
    pub fn text(status: u16, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.into(),
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// `ADDR` as `--prometheus` takes it: `HOST:PORT`, `[V6]:PORT`, or `:PORT`
/// for every interface.
pub fn parse_listen_address(text: &str) -> Result<SocketAddr, String> {
    let full = if text.starts_with(':') {
        format!("0.0.0.0{text}")
    } else {
        text.to_string()
    };
    full.to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| format!("`{text}` is not an address to listen on: use HOST:PORT, such as 127.0.0.1:9464, or :9464"))
}

/// A server answering on its own thread until dropped.
pub struct Server {
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Listens on `address` and answers each `GET`/`HEAD` request with
    /// `handler(path)`.
    pub fn start(
        address: SocketAddr,
        handler: impl Fn(&str) -> Response + Send + 'static,
    ) -> io::Result<Server> {
        let listener = TcpListener::bind(address)?;
        let address = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("weft-http".into())
            .spawn(move || serve(&listener, &stopping, &handler))?;
        Ok(Server {
            address,
            stop,
            thread: Some(thread),
        })
    }

    /// Where it listens (the port chosen when 0 was asked).
    pub fn address(&self) -> SocketAddr {
        self.address
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Waits up to 100 ms for the listener to have a connection waiting.
fn readable(listener: &TcpListener) -> bool {
    let mut p = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, a bounded wait.
    unsafe { libc::poll(&mut p, 1, 100) > 0 }
}

fn serve(listener: &TcpListener, stop: &AtomicBool, handler: &dyn Fn(&str) -> Response) {
    while !stop.load(Ordering::SeqCst) {
        if !readable(listener) {
            continue;
        }
        let Ok((stream, _)) = listener.accept() else {
            continue;
        };
        // One bad peer never stops the server.
        let _ = answer(stream, handler);
    }
}

fn answer(stream: TcpStream, handler: &dyn Fn(&str) -> Response) -> io::Result<()> {
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let head = read_head(&mut reader)?;
    let mut lines = head.lines();
    let request = lines.next().unwrap_or_default();
    let mut parts = request.split(' ');
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let response = match method {
        "GET" | "HEAD" => handler(path),
        "" => Response::text(400, "bad request\n"),
        _ => Response::text(405, "only GET and HEAD\n"),
    };
    let mut out = io::BufWriter::new(stream);
    write!(
        out,
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        response.status,
        reason(response.status),
        response.content_type,
        response.body.len()
    )?;
    if method != "HEAD" {
        out.write_all(&response.body)?;
    }
    out.flush()
}

/// Reads a message head (up to and without the empty line).
fn read_head(reader: &mut impl BufRead) -> io::Result<String> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        let n = reader.by_ref().take(MAX_HEAD as u64).read_line(&mut line)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        if line == "\r\n" || line == "\n" {
            return Ok(head);
        }
        head.push_str(&line);
        if head.len() > MAX_HEAD {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "head too long"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses() {
        assert_eq!(
            parse_listen_address("127.0.0.1:9464").unwrap(),
            "127.0.0.1:9464".parse().unwrap()
        );
        assert_eq!(
            parse_listen_address(":9464").unwrap(),
            "0.0.0.0:9464".parse().unwrap()
        );
        assert!(
            parse_listen_address("9464")
                .unwrap_err()
                .contains("HOST:PORT")
        );
    }

    #[test]
    fn a_server_answers_and_a_client_posts() {
        let server = Server::start("127.0.0.1:0".parse().unwrap(), |path| {
            Response::text(
                if path == "/x" { 200 } else { 404 },
                format!("path {path}\n"),
            )
        })
        .unwrap();
        let mut stream = TcpStream::connect(server.address()).unwrap();
        stream
            .write_all(b"POST /x HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        assert!(
            text.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"),
            "{text}"
        );
        let mut stream = TcpStream::connect(server.address()).unwrap();
        stream
            .write_all(b"GET /x?a=1 HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(text.ends_with("\r\n\r\npath /x\n"), "{text}");
        let mut stream = TcpStream::connect(server.address()).unwrap();
        stream.write_all(b"GET /nope HTTP/1.1\r\n\r\n").unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        assert!(text.starts_with("HTTP/1.1 404 Not Found\r\n"), "{text}");
        drop(server);
    }
}
