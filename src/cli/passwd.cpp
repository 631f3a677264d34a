#include "cli/passwd.hpp"

#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "auth/password_hash.hpp"
#include "auth/user_syntax.hpp"
#include "cli/commands.hpp"

namespace carrier::cli {

namespace {

// Reads one line from stdin without its line end; false at EOF before anything was read.
bool read_line(std::string& line) {
  line.clear();
  int c = 0;
  bool any = false;
  while ((c = std::getchar()) != EOF) {
    any = true;
    if (c == '\n') break;
    line.push_back(static_cast<char>(c));
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return any;
}

// Prompts on stderr with the terminal's echo off; restores it whatever happens.
bool prompt_hidden(const char* prompt, std::string& line) {
  std::fputs(prompt, stderr);
  std::fflush(stderr);
  termios old{};
  const bool tty = ::tcgetattr(STDIN_FILENO, &old) == 0;
  if (tty) {
    termios quiet = old;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
  }
  const bool got = read_line(line);
  if (tty) ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
  std::fputs("\n", stderr);
  return got;
}

int passwd(const std::string& name, bool hash_only) {
  if (auto problem = auth::user_name_problem(name); !problem.empty()) {
    std::cerr << "carrier passwd: " << problem << "\n";
    return kExitUsage;
  }
  if (auto st = auth::init_sodium(); !st) {
    std::cerr << "carrier passwd: " << st.error().detail << "\n";
    return kExitFailure;
  }
  // Stack copies of the password are wiped on every way out.
  std::string password, again;
  struct Wiper {
    std::string& a;
    std::string& b;
    ~Wiper() {
      auth::wipe(a);
      auth::wipe(b);
    }
  } wiper{password, again};
  if (::isatty(STDIN_FILENO)) {
    if (!prompt_hidden("Password: ", password) || !prompt_hidden("Again: ", again)) {
      std::cerr << "carrier passwd: no password given\n";
      return kExitFailure;
    }
    if (password != again) {
      std::cerr << "carrier passwd: the passwords differ\n";
      return kExitFailure;
    }
  } else if (!read_line(password)) {
    std::cerr << "carrier passwd: no password on stdin\n";
    return kExitFailure;
  }
  if (password.empty()) {
    std::cerr << "carrier passwd: the password is empty\n";
    return kExitFailure;
  }
  auto hash = auth::hash_password(password);
  if (!hash) {
    std::cerr << "carrier passwd: " << hash.error().detail << "\n";
    return kExitFailure;
  }
  if (hash_only) {
    std::printf("%s\n", hash->c_str());
  } else {
    std::printf("%s:%s\n", name.c_str(), hash->c_str());
  }
  return kExitOk;
}

}  // namespace

void add_passwd_command(CLI::App& app) {
  auto name = std::make_shared<std::string>();
  auto hash_only = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "passwd", "Hash a password for the users file: reads it from stdin (or asks twice on a terminal), prints NAME:HASH");
  cmd->add_option("name", *name, "The user name")->required();
  cmd->add_flag("--hash-only", *hash_only, "Print the hash alone (for password_hash in [[auth.user]])");
  cmd->callback([name, hash_only] {
    const int code = passwd(*name, *hash_only);
    std::fflush(stdout);
    std::exit(code);
  });
}

}  // namespace carrier::cli
