;;; eglot_driver.el --- a headless Emacs session with eglot and autograd-lsp  -*- lexical-binding: t; -*-

;; Emacs set up as editors/emacs/README.md says (the shipped autograd-lsp.el
;; loaded), then one session: open a file, wait for its diagnostics, hover a
;; variable, apply the first quick fix of the AG101 diagnostic, see the
;; diagnostics change, shut the server down. Writes what it saw as JSON to
;; $AG_OUT. Driven by tests/editors/test_emacs.py through environment variables.

(require 'cl-lib)
(require 'json)

(defvar ag-results nil)
(defvar ag-published nil "Every publishDiagnostics the server sent, newest first.")

(defun ag-put (key value)
  (push (cons key value) ag-results))

(defun ag-finish (&optional problem)
  (when problem (ag-put "error" problem))
  (with-temp-file (getenv "AG_OUT") (insert (json-encode ag-results)))
  (kill-emacs 0))

(defun ag-wait (predicate seconds)
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.1))
    (funcall predicate)))

(defun ag-latest ()
  (let ((params (car ag-published)))
    (and params (append (plist-get params :diagnostics) nil))))

(defun ag-count (code diagnostics)
  (cl-count code diagnostics :key (lambda (d) (plist-get d :code)) :test #'equal))

;; What the user's init file holds.
(load (getenv "AG_EL"))

;; Test instrumentation: wait long enough on a loaded machine, and record the
;; diagnostics as the server sent them.
(setq eglot-sync-connect 120 eglot-connect-timeout 120)
(advice-add 'eglot-handle-notification :before
            (lambda (_server method &rest params)
              (when (eq method 'textDocument/publishDiagnostics)
                (push params ag-published))))

(condition-case problem
    (progn
      (find-file (getenv "AG_FILE"))
      ;; eglot-ensure connects after the command that opened the file.
      (run-hooks 'post-command-hook)
      (let ((server (eglot-current-server)))
        (unless server (ag-finish "eglot did not start"))
        (ag-put "major_mode" (symbol-name major-mode))
        (unless (ag-wait (lambda () (ag-latest)) 120) (ag-finish "no diagnostics"))
        (ag-put "first" (vconcat (ag-latest)))

        ;; Hover.
        (goto-char (point-min))
        (forward-line (string-to-number (getenv "AG_HOVER_LINE")))
        (forward-char (string-to-number (getenv "AG_HOVER_CHARACTER")))
        (let ((hover (jsonrpc-request server :textDocument/hover (eglot--TextDocumentPositionParams))))
          (ag-put "hover" (plist-get (plist-get hover :contents) :value))
          (ag-put "hover_kind" (plist-get (plist-get hover :contents) :kind)))

        ;; The first quick fix of the AG101 diagnostic.
        (let* ((target (cl-find "AG101" (ag-latest) :key (lambda (d) (plist-get d :code)) :test #'equal))
               (before (ag-count "AG101" (ag-latest)))
               (actions (jsonrpc-request
                         server :textDocument/codeAction
                         (list :textDocument (eglot--TextDocumentIdentifier)
                               :range (plist-get target :range)
                               :context (list :diagnostics (vector target) :only ["quickfix"]))))
               (action (aref actions 0))
               (line (plist-get (plist-get (plist-get target :range) :start) :line)))
          (ag-put "action_title" (plist-get action :title))
          (eglot--apply-workspace-edit (plist-get action :edit))
          ;; Eglot sends the change from an idle timer, which a batch session never runs.
          (eglot--signal-textDocument/didChange)
          (goto-char (point-min))
          (forward-line line)
          (ag-put "fixed_line" (buffer-substring-no-properties (line-beginning-position) (line-end-position)))
          (ag-wait (lambda () (< (ag-count "AG101" (ag-latest)) before)) 120)
          (ag-put "after_fix" (vconcat (ag-latest))))

        ;; shutdown + exit, as `eglot-shutdown' sends them; it then deletes the
        ;; process at once, so the server's own exit code is read before that.
        (let ((process (jsonrpc--process server)))
          (setf (eglot--shutdown-requested server) t)
          (jsonrpc-request server :shutdown nil :timeout 30)
          (jsonrpc-notify server :exit nil)
          (ag-wait (lambda () (not (process-live-p process))) 30)
          (ag-put "exit_code" (process-exit-status process))
          (jsonrpc-shutdown server t)))
      (ag-finish))
  (error (ag-finish (format "%S" problem))))
