// Preloaded with `node --require` by the fail-closed test: makes the FFI
// package unloadable, exactly as on a machine where koffi did not install.
const Module = require("node:module");
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === "koffi") throw new Error("koffi is not available (test)");
  return load.call(this, request, ...rest);
};
