// Renders the served openapi.json; "Try it out" calls the server that served this page
// (the CSP allows no other origin), at the base path the page sits under.
"use strict";
(function () {
  var base = new URL(".", document.baseURI).href.replace(/\/$/, "");
  fetch(base + "/openapi.json")
    .then(function (answer) { return answer.json(); })
    .then(function (spec) {
      spec.servers = [{url: base, description: "This server"}];
      window.ui = SwaggerUIBundle({
        spec: spec,
        dom_id: "#swagger-ui",
        presets: [SwaggerUIBundle.presets.apis],
        layout: "BaseLayout",
        deepLinking: true,
        displayRequestDuration: true,
        supportedSubmitMethods: ["get"],
        validatorUrl: null
      });
    });
})();
